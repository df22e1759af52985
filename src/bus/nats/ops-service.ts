/**
 * The instance as a NATS micro service (`@nats-io/services`), so NATS tooling sees it:
 * `nats micro ls / info / stats agent-session-service` list every instance with its role,
 * version, uptime, turns in flight and SSE connections, and an operator can drain one.
 *
 * Subjects (docs/operations.md section 27):
 * - `$SRV.PING|INFO|STATS`, `$SRV.<verb>.agent-session-service`, `$SRV.<verb>.agent-session-service.<id>`:
 *   the framework's own (every instance answers the first two, one the third).
 * - `agent_sessions.ops.<id>.status|drain|resume`: this instance's endpoints, `<id>` being the
 *   micro service id (`nats micro ls` shows it; `instance_id` in its metadata names the instance).
 *
 * Static facts (instance id, role, mode, host, pid) are the service metadata; live figures come
 * from `status()` and are the `data` of each endpoint in STATS and the body of the status reply.
 */
import { Svcm, type Service, type ServiceMsg } from '@nats-io/services';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Logger } from '../../log.js';
import type { OpsHooks, OpsService, OpsServiceOptions } from '../ports.js';

/** The micro service name every instance registers under. */
export const OPS_SERVICE_NAME = 'agent-session-service';
/** Endpoint subjects are `<prefix>.<service id>.<endpoint>`. */
export const OPS_SUBJECT_PREFIX = 'agent_sessions.ops';

export async function startOpsService(nc: NatsConnection, opts: OpsServiceOptions, hooks: OpsHooks, log: Logger): Promise<OpsService> {
  let srv: Service | undefined;
  srv = await new Svcm(nc).add({
    name: OPS_SERVICE_NAME,
    version: opts.version,
    description: 'Agent Session Service instance',
    metadata: { ...opts.metadata },
    // Live figures in `nats micro stats`: the status, as the data of the `status` endpoint.
    statsHandler: async (endpoint) => (endpoint.subject.endsWith('.status') ? hooks.status() : null),
  });
  const id = srv.info().id;
  const group = srv.addGroup(`${OPS_SUBJECT_PREFIX}.${id}`);
  const reply = (msg: ServiceMsg, work: () => Promise<unknown>) => {
    work().then(
      (body) => msg.respond(JSON.stringify(body)),
      (err: unknown) => {
        log.warn({ err }, 'ops endpoint failed');
        msg.respondError(500, err instanceof Error ? err.message : String(err));
      },
    );
  };
  group.addEndpoint('status', {
    handler: (_err, msg) => reply(msg, async () => hooks.status()),
    metadata: { description: 'live status of this instance' },
  });
  group.addEndpoint('drain', {
    handler: (_err, msg) => reply(msg, () => hooks.drain()),
    metadata: { description: 'stop claiming turns and leave the load balancer; running turns finish' },
  });
  group.addEndpoint('resume', { handler: (_err, msg) => reply(msg, () => hooks.resume()), metadata: { description: 'undo drain' } });
  void srv.stopped.then((err) => {
    if (err) log.warn({ err }, 'NATS micro service stopped (permissions for $SRV.> and agent_sessions.ops.>?)');
  });
  // The server has the subscriptions once the flush returns: an operator's ping right after start finds this instance.
  await nc.flush();
  log.info({ service: OPS_SERVICE_NAME, id, subjects: `${OPS_SUBJECT_PREFIX}.${id}.>` }, 'registered as a NATS micro service');
  return {
    id,
    async stop() {
      const s = srv;
      srv = undefined;
      if (s && !s.isStopped) await s.stop();
    },
  };
}
