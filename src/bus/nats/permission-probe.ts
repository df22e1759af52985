import type { JetStreamManager } from '@nats-io/jetstream';
import { PermissionViolationError, type NatsConnection } from '@nats-io/transport-node';
import { CLAIM_STREAM, TURN_CONSUMER, TURN_STREAM } from './topology.js';

/** The service's ROLE setting: what an instance does, and so which NATS permissions it needs. */
export type ServiceRole = 'all' | 'api' | 'worker';

/** A subject token no session, instance or key ever has: every probe touches nothing real. */
const PROBE = 'permission-probe';

/** The login of each role in deploy/nats/auth.conf, for the message. */
const USER_OF_ROLE: Record<ServiceRole, string> = { all: 'service', api: 'api', worker: 'worker' };

/** One permission a role needs, and a call that uses it without changing anything. */
interface Probe {
  operation: 'publish' | 'subscribe';
  /** As auth.conf lists it. */
  permission: string;
  roles: readonly ServiceRole[];
  run(nc: NatsConnection, jsm: JetStreamManager): Promise<unknown>;
}

const API: readonly ServiceRole[] = ['all', 'api'];
const WORKER: readonly ServiceRole[] = ['all', 'worker'];

/**
 * The permissions that tell the roles apart (issue 30 item 15). What every role needs (JetStream
 * info, stream set-up, appends) the start has used already. Left out: pulling from and acking the
 * `workers` consumer, which cannot be tried without taking a turn; auth.conf grants them with the
 * consumer's info, which is probed.
 */
function probes(shards: number): Probe[] {
  const eventStreams = Array.from({ length: shards }, (_, k) => k);
  return [
    // SSE: stored events republished on live.<k>.<session>.
    ...eventStreams.map(
      (k): Probe => ({ operation: 'subscribe', permission: 'live.*.*', roles: API, run: (nc) => subscribeOnce(nc, `live.${k}.${PROBE}`) }),
    ),
    // Cancel and deleted signals, received by every role and sent by the API (no one listens to this session).
    {
      operation: 'subscribe',
      permission: 'ctl.*.*',
      roles: ['all', 'api', 'worker'],
      run: (nc) => subscribeOnce(nc, `ctl.${PROBE}.${PROBE}`),
    },
    { operation: 'publish', permission: 'ctl.*.*', roles: API, run: (nc) => nc.request(`ctl.${PROBE}.${PROBE}`, '', { timeout: 2000 }) },
    // Deleting a session purges its events and its queued turn (here: a subject never written).
    ...eventStreams.map(
      (k): Probe => ({
        operation: 'publish',
        permission: `$JS.API.STREAM.PURGE.EVENTS_${k}`,
        roles: API,
        run: (_nc, jsm) => jsm.streams.purge(`EVENTS_${k}`, { filter: `evt.${k}.${PROBE}` }),
      }),
    ),
    {
      operation: 'publish',
      permission: `$JS.API.STREAM.PURGE.${TURN_STREAM}`,
      roles: API,
      run: (_nc, jsm) => jsm.streams.purge(TURN_STREAM, { filter: `turn.${PROBE}` }),
    },
    // Claiming turns, fencing claims on the bucket's leader, deleting a finished job, asking a claim's owner.
    {
      operation: 'publish',
      permission: `$JS.API.CONSUMER.INFO.${TURN_STREAM}.${TURN_CONSUMER}`,
      roles: WORKER,
      run: (_nc, jsm) => jsm.consumers.info(TURN_STREAM, TURN_CONSUMER),
    },
    {
      operation: 'publish',
      permission: `$JS.API.STREAM.MSG.GET.${CLAIM_STREAM}`,
      roles: WORKER,
      run: (_nc, jsm) => jsm.streams.getMessage(CLAIM_STREAM, { last_by_subj: `$KV.turn_claims.${PROBE}` }),
    },
    // Not probed: MSG.DELETE on TURNS. A delete of a sequence past the end is proposed to the
    // replicas of an R3 stream, which fail to apply it ("stream store EOF") and reset the stream's
    // cluster state, over and over: every start made TURNS unavailable (chaos run of 11:29).
    {
      operation: 'publish',
      permission: 'agent_sessions.ops.*.alive',
      roles: WORKER,
      run: (nc) => nc.request(`agent_sessions.ops.${PROBE}.alive`, '', { timeout: 2000 }),
    },
  ];
}

/** Subscribes and unsubscribes; the server's refusal (-ERR) arrives before the flush's PONG. */
async function subscribeOnce(nc: NatsConnection, subject: string): Promise<void> {
  const sub = nc.subscribe(subject);
  await nc.flush();
  if (!sub.isClosed()) return sub.unsubscribe();
  const err = await sub.closed;
  if (err) throw err;
}

function isPermissionViolation(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (e instanceof PermissionViolationError || /permissions violation/i.test(e.message)) return true;
  }
  return false;
}

/** A NATS login that lacks permissions its role needs; the message is the one line a start prints. */
export class MissingNatsPermissionError extends Error {
  override name = 'PermissionViolationError';
}

/**
 * Tries every permission `role` needs and throws one MissingNatsPermissionError naming all that
 * are refused. A login of the wrong role (ROLE=all as `worker`) used to start and answer /health
 * while SSE clients looped and deletions failed. Other errors (no such message, no responders)
 * mean the server let the call through.
 */
export async function checkNatsPermissions(nc: NatsConnection, jsm: JetStreamManager, role: ServiceRole, shards: number): Promise<void> {
  const needed = probes(shards).filter((p) => p.roles.includes(role));
  const results = await Promise.all(needed.map((p) => p.run(nc, jsm).then(() => false, isPermissionViolation)));
  const refused = [...new Set(needed.filter((_, i) => results[i]).map((p) => `${p.operation} ${p.permission}`))];
  if (refused.length === 0) return;
  throw new MissingNatsPermissionError(
    `NATS login lacks permissions ROLE=${role} needs: ${refused.join(', ')} ` +
      `(deploy/nats/auth.conf: log in as user ${USER_OF_ROLE[role]}, or grant these to this user)`,
  );
}
