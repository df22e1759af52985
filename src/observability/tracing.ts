/**
 * Tracing: spans for HTTP requests, turns, reason steps (LLM calls) and tool executions, and the
 * ids every event of a turn carries in `context` (spec 2.5: `trace_id`, `span_id`,
 * `parent_span_id`).
 *
 * Two implementations behind one small interface, chosen once at start:
 * - export off (the default): spans are plain objects that only mint W3C-shaped ids (lazily, from
 *   a pooled random buffer); no OpenTelemetry SDK code runs, `end()` and attributes are no-ops.
 * - export on (`OTEL_EXPORTER_OTLP_ENDPOINT`): spans are OpenTelemetry SDK spans, batched and
 *   exported over OTLP/HTTP (JSON), in otel-tracing.ts, which is imported only then. Parents are
 *   passed explicitly (no global context manager, no global provider), so nothing here changes
 *   other libraries' behaviour.
 *
 * Across processes a span travels as a W3C `traceparent` string (in the turn job; incoming on
 * HTTP). Inside a request the active span is kept in an AsyncLocalStorage owned by the Tracing
 * object (not a module singleton), so services can stamp the events they append.
 */
import { randomFillSync } from 'node:crypto';
import type { Logger } from '../log.js';
import {
  activeSpanStore,
  parseTraceparent,
  ZERO_SPAN,
  ZERO_TRACE,
  type TraceContextFields,
  type TraceSpan,
  type Tracing,
  type TracingOptions,
} from './trace-context.js';

export { activeSpanStore, parseTraceparent } from './trace-context.js';
export type {
  StartSpanOptions,
  TraceAttributes,
  TraceContextFields,
  TraceSpan,
  TraceSpanKind,
  Tracing,
  TracingOptions,
} from './trace-context.js';

/** The traces URL from the OTEL_* settings: the traces endpoint as given, else `<endpoint>/v1/traces`. */
export function otlpTracesUrl(endpoint: string | undefined, tracesEndpoint: string | undefined): string | undefined {
  if (tracesEndpoint) return tracesEndpoint;
  if (!endpoint) return undefined;
  return `${endpoint.replace(/\/+$/, '')}/v1/traces`;
}

/** Ids only (export off): spans mint W3C-shaped ids and do nothing else. */
export function createIdTracing(): Tracing {
  return {
    exporting: false,
    startSpan: (_name, o = {}) => idSpanUnder(o.parent),
    ...activeSpanStore(),
    close: async () => undefined,
  };
}

/**
 * Builds the tracing of this process: ids only when `tracesUrl` is absent, else OpenTelemetry
 * with OTLP/HTTP export (otel-tracing.ts, loaded only then: the SDK costs start-up time).
 */
export async function createTracing(opts: Partial<TracingOptions> = {}, deps: { log?: Logger } = {}): Promise<Tracing> {
  if (!opts.tracesUrl) return createIdTracing();
  const { createOtelTracing } = await import('./otel-tracing.js');
  return createOtelTracing({ ...opts, tracesUrl: opts.tracesUrl }, deps);
}

// --- export off: ids only -------------------------------------------------------------------

/** Random bytes drawn from one pooled buffer: a span id costs a slice to hex, not a syscall. */
const POOL_BYTES = 8192;
const pool = Buffer.allocUnsafe(POOL_BYTES);
let poolAt = POOL_BYTES;
function randomHex(bytes: number): string {
  if (poolAt + bytes > POOL_BYTES) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const hex = pool.toString('hex', poolAt, poolAt + bytes);
  poolAt += bytes;
  return hex === ZERO_SPAN || hex === ZERO_TRACE ? randomHex(bytes) : hex;
}

function idSpanUnder(parent: TraceSpan | string | undefined): TraceSpan {
  if (parent === undefined) return new IdSpan(undefined, undefined, true);
  if (typeof parent !== 'string') return new IdSpan(parent.traceId, parent.spanId, parent instanceof IdSpan ? parent.sampled : true);
  const remote = parseTraceparent(parent);
  return remote ? new IdSpan(remote.traceId, remote.spanId, remote.sampled) : new IdSpan(undefined, undefined, true);
}

/** A span that only has ids, minted on first use (most requests never need theirs). */
class IdSpan implements TraceSpan {
  #traceId: string | undefined;
  #spanId: string | undefined;
  readonly parentSpanId: string | undefined;
  readonly sampled: boolean;

  constructor(traceId: string | undefined, parentSpanId: string | undefined, sampled: boolean) {
    this.#traceId = traceId;
    this.parentSpanId = parentSpanId;
    this.sampled = sampled;
  }

  get traceId(): string {
    return (this.#traceId ??= randomHex(16));
  }

  get spanId(): string {
    return (this.#spanId ??= randomHex(8));
  }

  stamp(context: TraceContextFields): void {
    context.trace_id = this.traceId;
    context.span_id = this.spanId;
    if (this.parentSpanId) context.parent_span_id = this.parentSpanId;
  }

  traceparent(): string {
    return `00-${this.traceId}-${this.spanId}-${this.sampled ? '01' : '00'}`;
  }

  child(): TraceSpan {
    return new IdSpan(this.traceId, this.spanId, this.sampled);
  }

  setAttributes(): void {}
  updateName(): void {}
  fail(): void {}
  end(): void {}
}

/** Stamps each event's `context` with the span's ids (spec 2.5); creates `context` when absent. */
export function stampEvents(events: readonly { context?: TraceContextFields }[], span: TraceSpan): void {
  for (const e of events) span.stamp((e.context ??= {}));
}
