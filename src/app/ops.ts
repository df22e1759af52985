import type { SessionEvent } from '../../schemas/events.js';
import { hostname } from 'node:os';
import type { Bus } from '../bus/index.js';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import { createInstanceOps } from '../observability/index.js';
import type { StartPhases } from '../start-phases.js';
import type { TurnWorker } from '../../actors/index.js';
import { SERVICE_VERSION } from '../version.js';
import type { Closers } from './closers.js';
import type { Infrastructure } from './infrastructure.js';

export interface OpsDeps {
  log: Logger;
  phases: StartPhases;
  closers: Closers;
  instanceId: string;
  startedAt: number;
  port: number;
  worker: TurnWorker | undefined;
  sseConnections: () => number;
}

/** Distributed mode: `nats micro ls|info|stats` list this instance; ping/status/drain over NATS. */
export async function serveOpsOverBus(config: Config, bus: Bus<SessionEvent>, { checks }: Infrastructure, deps: OpsDeps): Promise<void> {
  if (!bus.serveOps) return;
  const { log, instanceId } = deps;
  const ops = createInstanceOps({
    instanceId,
    role: config.ROLE,
    mode: config.mode,
    version: SERVICE_VERSION,
    log,
    healthChecks: checks,
    worker: deps.worker,
    sseConnections: deps.sseConnections,
    startedAt: deps.startedAt,
  });
  const opsService = await deps.phases.time('nats-micro', () =>
    bus.serveOps!(
      {
        version: SERVICE_VERSION,
        metadata: {
          instance_id: instanceId,
          role: config.ROLE,
          mode: config.mode,
          host: hostname(),
          pid: String(process.pid),
          port: String(deps.port),
        },
      },
      ops,
    ),
  );
  deps.closers.add('nats-micro', () => opsService.stop());
}
