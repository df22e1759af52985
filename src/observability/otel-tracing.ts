/**
 * Export on: OpenTelemetry SDK spans behind the TraceSpan interface of tracing.ts, batched and
 * exported over OTLP/HTTP (JSON). Imported by `createTracing` only when a traces URL is set.
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOnSampler, BatchSpanProcessor, ParentBasedSampler, TracerProvider } from '@opentelemetry/sdk-trace';
import type { Logger } from '../log.js';
import {
  activeSpanStore,
  parseTraceparent,
  type TraceAttributes,
  type TraceContextFields,
  type TraceSpan,
  type TraceSpanKind,
  type Tracing,
  type TracingOptions,
} from './trace-context.js';

export function createOtelTracing(opts: Partial<TracingOptions> & { tracesUrl: string }, deps: { log?: Logger } = {}): Tracing {
  const provider = new TracerProvider({
    sampler: new ParentBasedSampler({ root: new AlwaysOnSampler() }),
    resource: resourceFromAttributes({
      'service.name': opts.serviceName ?? 'agent-session-service',
      'service.version': opts.serviceVersion ?? '0.0.0',
      'service.instance.id': opts.instanceId ?? '',
      'service.role': opts.role ?? 'all',
    }),
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: new OTLPTraceExporter({ url: opts.tracesUrl }),
        scheduledDelayMillis: opts.exportDelayMs ?? 5000,
      }),
    ],
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
        ? trace.setSpanContext(ROOT_CONTEXT, {
            traceId: remote.traceId,
            spanId: remote.spanId,
            traceFlags: remote.sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
            isRemote: true,
          })
        : ROOT_CONTEXT;
      return OtelSpan.start(tracer, name, o, ctx, remote?.spanId);
    },
    ...activeSpanStore(),
    async close() {
      await provider.shutdown().catch((err: unknown) => deps.log?.warn({ err }, 'trace export at shutdown failed'));
    },
  };
}

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

  static start(
    tracer: Tracer,
    name: string,
    o: { kind?: TraceSpanKind; attributes?: TraceAttributes },
    ctx: Context,
    parentSpanId: string | undefined,
  ): OtelSpan {
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
