/**
 * Assembles what the composition root needs for observability: the task counts behind the
 * spec's timeseries (always on; shared through the database in distributed mode) and, when
 * metrics are enabled (METRICS_TOKEN or METRICS_PORT), the Prometheus registry and the
 * observers the HTTP layer, the LLM providers and the bus report to. Off: no registry, no
 * observers, nothing on the request path.
 */
import type { TurnClaim } from '../bus/index.js';
import type { HttpObserver, SseObserver } from '../http/index.js';
import type { LlmObserver } from '../llm/index.js';
import type { Logger } from '../log.js';
import { createHttpMetrics, createSseMetrics } from './http-metrics.js';
import type { BusObserver } from './instrumented-bus.js';
import { createLlmMetrics } from './llm-metrics.js';
import { createPrometheusRegistry, type DependencyCheck } from './prometheus.js';
import { TaskCounts } from './task-counts.js';
import { localTaskCountSource, type TaskCountSource } from './timeseries.js';
import { createSharedTaskCounts, type SqlRunner } from './timeseries-store.js';
import { createTurnMetrics } from './turn-metrics.js';
import { createFoldMetrics, type FoldMetrics } from './fold-metrics.js';

export interface ObservabilityOptions {
  instanceId: string;
  role: string;
  mode: 'embedded' | 'single' | 'distributed';
  version: string;
  /** Prometheus metrics on (METRICS_TOKEN or METRICS_PORT set). */
  metrics: boolean;
  /** TIMESERIES_FLUSH_MS: how often distributed instances write their task counts. */
  flushMs: number;
}

export interface ObservabilityDeps {
  sql: SqlRunner;
  log: Logger;
  checks: DependencyCheck[];
}

/** Values known only once the server and worker exist; read at scrape time. */
export interface LateSources {
  sseStreams?: () => number;
  turnsRunning?: () => number;
  isCapability?: (id: string) => boolean;
}

export function createObservability(deps: ObservabilityDeps, opts: ObservabilityOptions) {
  const counts = new TaskCounts();
  const shared =
    opts.mode === 'distributed'
      ? createSharedTaskCounts(
          { sql: deps.sql, counts, log: deps.log },
          { instanceId: opts.instanceId, role: opts.role, flushMs: opts.flushMs },
        )
      : null;
  const late: Required<LateSources> = { sseStreams: () => 0, turnsRunning: () => 0, isCapability: () => false };
  const registry = opts.metrics
    ? createPrometheusRegistry({
        checks: deps.checks,
        info: { version: opts.version, mode: opts.mode, role: opts.role, instance_id: opts.instanceId },
      })
    : null;
  const turns = registry
    ? createTurnMetrics(registry, { turnsRunning: () => late.turnsRunning(), isCapability: (id) => late.isCapability(id) })
    : null;
  const bus: BusObserver = {
    claimed(claim: TurnClaim) {
      counts.record('task_claimed');
      turns?.claimed(claim);
    },
    completed(claim: TurnClaim) {
      counts.record('task_completed');
      turns?.completed(claim);
    },
    ...(turns ? { appended: turns.appended } : {}),
  };
  return {
    /** Where the timeseries route reads: this instance, or every live instance (distributed). */
    timeseries: (shared?.source ?? localTaskCountSource(opts.instanceId, counts)) as TaskCountSource,
    bus,
    http: (registry ? createHttpMetrics(registry) : null) as HttpObserver | null,
    sse: (registry ? createSseMetrics(registry, () => late.sseStreams()) : null) as SseObserver | null,
    llm: (registry ? createLlmMetrics(registry) : undefined) as LlmObserver | undefined,
    /** The turn engine's fold costs (snapshot loads and writes, events read). */
    folds: (registry ? createFoldMetrics(registry) : undefined) as FoldMetrics | undefined,
    /** The Prometheus text exposition; null when metrics are off. */
    scrape: registry ? () => registry.metrics() : null,
    bind(sources: LateSources): void {
      Object.assign(late, sources);
    },
    close: async (): Promise<void> => {
      await shared?.close();
    },
  };
}

export type Observability = ReturnType<typeof createObservability>;
