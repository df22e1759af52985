/**
 * The operator actions an instance offers over NATS (bus/nats/ops-service.ts): its live status,
 * drain and resume. Drain is SIGTERM's drain without the exit: the instance stops claiming turns
 * (running ones finish) and `/health` answers 503 `{"drain":"draining"}` so the load balancer
 * sends it no new requests; open SSE streams stay until their cycle moves them (SSE_CYCLE_MS).
 */
import type { DependencyCheck as HealthCheck } from './prometheus.js';
import type { InstanceStatus, OpsHooks } from '../bus/index.js';
import type { Logger } from '../log.js';

export interface InstanceOpsDeps {
  instanceId: string;
  role: string;
  mode: string;
  version: string;
  log: Logger;
  /** The health checks `/health` runs (a drain adds one that fails while draining). */
  healthChecks: HealthCheck[];
  /** Open SSE streams of this instance. */
  sseConnections: () => number;
  /** The turn worker, when this instance runs turns. */
  worker?: { readonly running: number; pause(): void; resume(): void };
  /** Process start, ms since the epoch (default: now). */
  startedAt?: number;
}

/** The health check a drained instance fails, so the load balancer takes it out of the pool. */
const DRAINING_CHECK: HealthCheck = {
  name: 'drain',
  check: () => Promise.reject(Object.assign(new Error('draining'), { healthState: 'draining' })),
};

export function createInstanceOps(deps: InstanceOpsDeps): OpsHooks {
  const startedAt = deps.startedAt ?? Date.now();
  let draining = false;

  function status(): InstanceStatus {
    return {
      instance_id: deps.instanceId,
      role: deps.role,
      version: deps.version,
      mode: deps.mode,
      uptime_s: Math.round((Date.now() - startedAt) / 1000),
      turns_in_flight: deps.worker?.running ?? 0,
      sse_connections: deps.sseConnections(),
      draining,
    };
  }

  return {
    status,
    async drain() {
      if (!draining) {
        draining = true;
        deps.worker?.pause();
        deps.healthChecks.push(DRAINING_CHECK);
        deps.log.warn({ turnsInFlight: deps.worker?.running ?? 0 }, 'draining on operator request (NATS): no new turns, /health 503');
      }
      return status();
    },
    async resume() {
      if (draining) {
        draining = false;
        deps.worker?.resume();
        const i = deps.healthChecks.indexOf(DRAINING_CHECK);
        if (i >= 0) deps.healthChecks.splice(i, 1);
        deps.log.info('drain undone on operator request (NATS)');
      }
      return status();
    },
  };
}
