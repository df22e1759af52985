/**
 * Tracing: spans for HTTP requests, turns, reason steps (LLM calls) and tool executions, and the
 * ids every event of a turn carries in `context` (spec 2.5: `trace_id`, `span_id`,
 * `parent_span_id`).
 *
 * Two implementations behind one small interface, chosen once at start:
 * - export off (the default): spans are plain objects that only mint W3C-shaped ids (lazily, from
 *   a pooled random buffer); no OpenTelemetry SDK code runs, `end()` and attributes are no-ops.
 * - export on (`OTEL_EXPORTER_OTLP_ENDPOINT`): spans are OpenTelemetry SDK spans, batched and
 *   exported over OTLP/HTTP (JSON). Parents are passed explicitly (no global context manager,
 *   no global provider), so nothing here changes other libraries' behaviour.
 *
 * Across processes a span travels as a W3C `traceparent` string (in the turn job; incoming on
 * HTTP). Inside a request the active span is kept in an AsyncLocalStorage owned by the Tracing
 * object (not a module singleton), so services can stamp the events they append.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomFillSync } from 'node:crypto';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, ParentBasedSampler, AlwaysOnSampler, TracerProvider } from '@opentelemetry/sdk-trace';
import type { Logger } from '../log.js';

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

/** The traces URL from the OTEL_* settings: the traces endpoint as given, else `<endpoint>/v1/traces`. */
export function otlpTracesUrl(endpoint: string | undefined, tracesEndpoint: string | undefined): string | undefined {
  if (tracesEndpoint) return tracesEndpoint;
  if (!endpoint) return undefined;
  return `${endpoint.replace(/\/+$/, '')}/v1/traces`;
}

/** Builds the tracing of this process: id-only when `tracesUrl` is absent, else OpenTelemetry with OTLP/HTTP export. */
export function createTracing(opts: Partial<TracingOptions> = {}, deps: { log?: Logger } = {}): Tracing {
  const store = new AsyncLocalStorage<TraceSpan>();
  const common = {
    run: <T>(span: TraceSpan, fn: () => T): T => store.run(span, fn),
    active: () => store.getStore(),
  };
  if (!opts.tracesUrl) {
    return {
      exporting: false,
      startSpan: (_name, o = {}) => idSpanUnder(o.parent),
      ...common,
      close: async () => undefined,
    };
  }
  const provider = new TracerProvider({
    sampler: new ParentBasedSampler({ root: new AlwaysOnSampler() }),
    resource: resourceFromAttributes({
      'service.name': opts.serviceName ?? 'agent-session-service',
      'service.version': opts.serviceVersion ?? '0.0.0',
      'service.instance.id': opts.instanceId ?? '',
      'service.role': opts.role ?? 'all',
    }),
    spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: opts.tracesUrl }), scheduledDelayMillis: opts.exportDelayMs ?? 5000 })],
  });
  const tracer = provider.getTracer('agent-session-service', opts.serviceVersion);
  deps.log?.info({ url: opts.tracesUrl }, 'exporting traces over OTLP/HTTP');
  return {
    exporting: true,
    startSpan(name, o = {}) {
      const parent = o.parent;
      if (parent instanceof OtelSpan) return parent.child(name, o);
      const remote = typeof parent === 'string' ? parseTraceparent(parent) : undefined;
      const ctx = remote
        ? trace.setSpanContext(ROOT_CONTEXT, { traceId: remote.traceId, spanId: remote.spanId, traceFlags: remote.sampled ? TraceFlags.SAMPLED : TraceFlags.NONE, isRemote: true })
        : ROOT_CONTEXT;
      return OtelSpan.start(tracer, name, o, ctx, remote?.spanId);
    },
    ...common,
    async close() {
      await provider.shutdown().catch((err: unknown) => deps.log?.warn({ err }, 'trace export at shutdown failed'));
    },
  };
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
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);

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

// --- export on: OpenTelemetry SDK spans ----------------------------------------------------

const KINDS: Record<TraceSpanKind, SpanKind> = { server: SpanKind.SERVER, internal: SpanKind.INTERNAL, consumer: SpanKind.CONSUMER };

class OtelSpan implements TraceSpan {
  readonly #tracer: Tracer;
  readonly #span: Span;
  readonly parentSpanId: string | undefined;

  private constructor(tracer: Tracer, span: Span, parentSpanId: string | undefined) {
    this.#tracer = tracer;
    this.#span = span;
    this.parentSpanId = parentSpanId;
  }

  static start(tracer: Tracer, name: string, o: { kind?: TraceSpanKind; attributes?: TraceAttributes }, ctx: Context, parentSpanId: string | undefined): OtelSpan {
    const span = tracer.startSpan(name, { kind: KINDS[o.kind ?? 'internal'], attributes: o.attributes && defined(o.attributes) }, ctx);
    return new OtelSpan(tracer, span, parentSpanId);
  }

  get traceId(): string {
    return this.#span.spanContext().traceId;
  }

  get spanId(): string {
    return this.#span.spanContext().spanId;
  }

  stamp(context: TraceContextFields): void {
    const sc = this.#span.spanContext();
    context.trace_id = sc.traceId;
    context.span_id = sc.spanId;
    if (this.parentSpanId) context.parent_span_id = this.parentSpanId;
  }

  traceparent(): string {
    const sc = this.#span.spanContext();
    return `00-${sc.traceId}-${sc.spanId}-${sc.traceFlags & TraceFlags.SAMPLED ? '01' : '00'}`;
  }

  child(name: string, o: { kind?: TraceSpanKind; attributes?: TraceAttributes } = {}): TraceSpan {
    return OtelSpan.start(this.#tracer, name, o, trace.setSpan(ROOT_CONTEXT, this.#span), this.spanId);
  }

  setAttributes(attributes: TraceAttributes): void {
    this.#span.setAttributes(defined(attributes));
  }

  updateName(name: string): void {
    this.#span.updateName(name);
  }

  fail(err: unknown): void {
    const e = err instanceof Error ? err : new Error(String(err));
    this.#span.recordException(e);
    this.#span.setStatus({ code: SpanStatusCode.ERROR, message: e.message });
  }

  end(): void {
    this.#span.end();
  }
}

function defined(a: TraceAttributes): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const k in a) if (a[k] !== undefined) out[k] = a[k];
  return out;
}

/** Stamps each event's `context` with the span's ids (spec 2.5); creates `context` when absent. */
export function stampEvents(events: readonly { context?: TraceContextFields }[], span: TraceSpan): void {
  for (const e of events) span.stamp((e.context ??= {}));
}
