/**
 * Turn, tool and event-log metrics, read off the bus (instrumented-bus.ts) rather than from
 * inside the turn engine: claims and their completion from the turn queue, and the spec's
 * events (6.2) as they are appended — `turn.*` for outcomes, durations and iterations,
 * `tool.completed` for tool executions. Each instance counts what it appended or claimed;
 * sum over instances in Prometheus.
 */
import { Gauge, type Registry } from 'prom-client';
import type { AppendResult, TurnClaim } from '../bus/index.js';
import { EVENT_TYPES } from '../../schemas/event-types.js';
import type { NewSessionEvent, SessionEvent } from '../../schemas/events.js';
import { uuidv7Millis } from '../ids.js';
import { CounterFamily, HistogramFamily, LATENCY_BUCKETS_S, LONG_BUCKETS_S, type CounterCell, type HistogramCell } from './cells.js';
import type { BusObserver } from './instrumented-bus.js';
import { METRIC_PREFIX } from './names.js';
import { TurnErrorCode } from '../../schemas/events.js';

const ITERATION_BUCKETS = [1, 2, 3, 5, 10, 20, 50, 100] as const;
/** Every `turn.failed` code of the catalogue, so none is counted as another. */
const TURN_ERROR_CODES: readonly string[] = TurnErrorCode.anyOf.map((code) => code.const);

export interface TurnMetricsSources {
  /** Turns running in this instance's worker right now (0 for `api` instances). */
  turnsRunning: () => number;
  /** Whether a capability id is registered (tags are partly caller-supplied: unknown ids become `unknown`). */
  isCapability: (id: string) => boolean;
}

export function createTurnMetrics(registry: Registry, sources: TurnMetricsSources): Required<BusObserver> {
  const p = METRIC_PREFIX;
  new Gauge({
    name: `${p}turns_running`,
    help: 'Turns running in this instance now.',
    registers: [registry],
    collect() {
      this.set(sources.turnsRunning());
    },
  });
  const claimed = new CounterFamily(registry, {
    name: `${p}tasks_claimed_total`,
    help: 'Turn jobs claimed from the queue by this instance (redeliveries included).',
  }).cell();
  const completed = new CounterFamily(registry, {
    name: `${p}tasks_completed_total`,
    help: 'Claimed turn jobs settled as done (acknowledged) by this instance.',
  }).cell();
  const redelivered = new CounterFamily(registry, {
    name: `${p}turn_redeliveries_total`,
    help: 'Claims of a turn job that an earlier claim did not finish.',
  }).cell();
  const claimWait = new HistogramFamily(registry, {
    name: `${p}turn_claim_wait_seconds`,
    help: 'From enqueueing a turn job to its first claim.',
    buckets: LATENCY_BUCKETS_S,
  }).cell();
  const started = new CounterFamily(registry, { name: `${p}turns_started_total`, help: 'Turns started (turn.started appended).' }).cell();
  const turnsCompleted = new CounterFamily(registry, {
    name: `${p}turns_completed_total`,
    help: 'Turns completed (turn.completed).',
  }).cell();
  const failedFamily = new CounterFamily(registry, {
    name: `${p}turns_failed_total`,
    help: 'Turns failed (turn.failed), by error code.',
    labelNames: ['error_code'],
  });
  const failed = new Map(TURN_ERROR_CODES.map((c) => [c, failedFamily.cell({ error_code: c })]));
  const cancelled = new CounterFamily(registry, {
    name: `${p}turns_cancelled_total`,
    help: 'Turns cancelled by the user (turn.cancelled).',
  }).cell();
  const durationFamily = new HistogramFamily(registry, {
    name: `${p}turn_duration_seconds`,
    help: 'Turn wall time from its start to its end, by outcome.',
    labelNames: ['outcome'],
    buckets: LONG_BUCKETS_S,
  });
  const duration = {
    completed: durationFamily.cell({ outcome: 'completed' }),
    failed: durationFamily.cell({ outcome: 'failed' }),
    cancelled: durationFamily.cell({ outcome: 'cancelled' }),
  };
  const iterations = new HistogramFamily(registry, {
    name: `${p}turn_iterations`,
    help: 'Reason/act iterations of finished turns (completed or failed).',
    buckets: ITERATION_BUCKETS,
  }).cell();
  const toolRuns = new CounterFamily(registry, {
    name: `${p}tool_executions_total`,
    help: 'Tool executions, by capability (`client` for client tools) and outcome.',
    labelNames: ['capability', 'outcome'],
  });
  const toolDuration = new HistogramFamily(registry, {
    name: `${p}tool_execution_duration_seconds`,
    help: 'Tool execution time, by capability.',
    labelNames: ['capability'],
    buckets: LONG_BUCKETS_S,
  });
  const toolCells = new Map<string, { success: CounterCell; error: CounterCell; duration: HistogramCell }>();
  const toolCellsOf = (capability: string) => {
    let c = toolCells.get(capability);
    if (!c) {
      c = {
        success: toolRuns.cell({ capability, outcome: 'success' }),
        error: toolRuns.cell({ capability, outcome: 'error' }),
        duration: toolDuration.cell({ capability }),
      };
      toolCells.set(capability, c);
    }
    return c;
  };
  const eventsFamily = new CounterFamily(registry, {
    name: `${p}events_appended_total`,
    help: 'Session events appended by this instance, by type.',
    labelNames: ['type'],
  });
  const eventCells = new Map(EVENT_TYPES.map((t) => [t as string, eventsFamily.cell({ type: t })]));
  const appends = new CounterFamily(registry, {
    name: `${p}event_appends_total`,
    help: 'Append calls to the event log, by result.',
    labelNames: ['result'],
  });
  const appendResult = {
    ok: appends.cell({ result: 'ok' }),
    conflict: appends.cell({ result: 'conflict' }),
    error: appends.cell({ result: 'error' }),
  };
  const appendDuration = new HistogramFamily(registry, {
    name: `${p}event_append_duration_seconds`,
    help: 'Duration of one append call (one or more events, stored and acknowledged).',
    buckets: LATENCY_BUCKETS_S,
  }).cell();

  function turnEvent(e: NewSessionEvent): void {
    switch (e.type) {
      case 'turn.started':
        return started.inc();
      case 'turn.completed':
        turnsCompleted.inc();
        duration.completed.observe(e.data.duration_ms / 1000);
        return iterations.observe(e.data.iterations);
      case 'turn.failed':
        (failed.get(e.data.error_code) ?? failed.get('internal_error')!).inc();
        duration.failed.observe(secondsSince(e));
        return iterations.observe(e.data.iterations);
      case 'turn.cancelled':
        cancelled.inc();
        return duration.cancelled.observe(secondsSince(e));
      case 'tool.completed': {
        const cells = toolCellsOf(capabilityOf(e.tags, sources.isCapability));
        (e.data.success ? cells.success : cells.error).inc();
        const ms = e.data.duration_ms;
        if (ms !== undefined && ms > 0) cells.duration.observe(ms / 1000);
        return;
      }
    }
  }

  return {
    claimed(claim: TurnClaim) {
      claimed.inc();
      if (claim.deliveryCount > 1) return redelivered.inc();
      // The queue-level turn id is a UUIDv7 minted when the job was enqueued.
      const enqueuedAt = uuidv7Millis(claim.turn.turn_id);
      if (Number.isFinite(enqueuedAt)) claimWait.observe(Math.max(0, Date.now() - enqueuedAt) / 1000);
    },
    completed() {
      completed.inc();
    },
    appended(events: readonly NewSessionEvent[], seconds: number, result: AppendResult<SessionEvent> | undefined) {
      appendDuration.observe(seconds);
      if (!result) return appendResult.error.inc();
      if (!result.ok) return appendResult.conflict.inc();
      appendResult.ok.inc();
      for (const e of events) {
        eventCells.get(e.type)?.inc();
        if (e.type.startsWith('turn.') || e.type === 'tool.completed') turnEvent(e);
      }
    },
  };
}

/** Seconds since the turn began: its turn id is a UUIDv7 minted when the turn was accepted. */
function secondsSince(e: NewSessionEvent): number {
  const turnId = e.context?.turn_id;
  const began = turnId ? uuidv7Millis(turnId) : NaN;
  return Number.isFinite(began) ? Math.max(0, Date.now() - began) / 1000 : 0;
}

/**
 * The `capability:<id>` tag of a tool event; `client` for client tools; `unknown` otherwise.
 * The event's own tags come after the input message's (which callers choose), hence from the
 * end, and only registered ids count, so callers cannot add label values.
 */
function capabilityOf(tags: readonly string[] | undefined, isCapability: (id: string) => boolean): string {
  if (!tags) return 'unknown';
  for (let i = tags.length - 1; i >= 0; i--) {
    const t = tags[i]!;
    if (t === 'client_tool') return 'client';
    if (t.startsWith('capability:')) {
      const id = t.slice('capability:'.length);
      return isCapability(id) ? id : 'unknown';
    }
  }
  return 'unknown';
}
