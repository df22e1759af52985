/**
 * The tracing interface and the W3C trace-context helpers both implementations share: the
 * id-only one (tracing.ts) and the OpenTelemetry one (otel-tracing.ts, loaded on demand).
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** The correlation fields of spec 2.5 that tracing fills in on an event's `context`. */
export interface TraceContextFields {
  trace_id?: string;
  span_id?: string;
  parent_span_id?: string;
}

export type TraceAttributes = Record<string, string | number | boolean | undefined>;
export type TraceSpanKind = 'server' | 'internal' | 'consumer';

export interface TraceSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** The parent's span id; undefined for a root span. */
  readonly parentSpanId: string | undefined;
  /** Writes trace_id, span_id and parent_span_id (when there is a parent) into an event context. */
  stamp(context: TraceContextFields): void;
  /** This span as a W3C traceparent header value. */
  traceparent(): string;
  child(name: string, opts?: { kind?: TraceSpanKind; attributes?: TraceAttributes }): TraceSpan;
  setAttributes(attributes: TraceAttributes): void;
  updateName(name: string): void;
  /** Marks the span failed (status error, the error recorded as an exception event). */
  fail(err: unknown): void;
  end(): void;
}

export interface StartSpanOptions {
  /** A local parent span, or a remote one as a W3C traceparent (malformed values are ignored). */
  parent?: TraceSpan | string;
  kind?: TraceSpanKind;
  attributes?: TraceAttributes;
}

export interface Tracing {
  /** True when spans are exported (OTEL_EXPORTER_OTLP_ENDPOINT set). */
  readonly exporting: boolean;
  startSpan(name: string, opts?: StartSpanOptions): TraceSpan;
  /** Runs fn with `span` as the active span (see `active`). */
  run<T>(span: TraceSpan, fn: () => T): T;
  /** The span of the request (or job) this code runs for, if any. */
  active(): TraceSpan | undefined;
  /** Exports what is still buffered and stops; a no-op when export is off. */
  close(): Promise<void>;
}

export interface TracingOptions {
  /** OTLP/HTTP traces URL, e.g. `http://collector:4318/v1/traces`; absent: export off. */
  tracesUrl?: string;
  serviceName: string;
  serviceVersion: string;
  instanceId: string;
  role: string;
  /** Batch export delay, in ms (OTEL_BSP_SCHEDULE_DELAY, default 5000). */
  exportDelayMs?: number;
}

/** The active-span store every Tracing has: an AsyncLocalStorage of its own, not a module singleton. */
export function activeSpanStore(): Pick<Tracing, 'run' | 'active'> {
  const store = new AsyncLocalStorage<TraceSpan>();
  return { run: (span, fn) => store.run(span, fn), active: () => store.getStore() };
}

/** A W3C traceparent, parsed; undefined when malformed or all-zero (then a new trace starts). */
export function parseTraceparent(value: string | undefined): { traceId: string; spanId: string; sampled: boolean } | undefined {
  if (!value) return undefined;
  const m = TRACEPARENT_RE.exec(value.trim());
  if (!m || m[1] === 'ff' || m[2] === ZERO_TRACE || m[3] === ZERO_SPAN) return undefined;
  if (m[1] === '00' && m[5] !== undefined) return undefined; // version 00 has exactly four fields
  return { traceId: m[2]!, spanId: m[3]!, sampled: (parseInt(m[4]!, 16) & 1) === 1 };
}

const TRACEPARENT_RE = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
export const ZERO_TRACE = '0'.repeat(32);
export const ZERO_SPAN = '0'.repeat(16);
