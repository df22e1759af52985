import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One exported span, flattened from an OTLP/HTTP JSON export request. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  /** The exporting process's resource attributes (service.name, service.role, …). */
  resource: Record<string, unknown>;
  status: { code?: number; message?: string };
}

export interface OtlpReceiver {
  /** The base URL, as OTEL_EXPORTER_OTLP_ENDPOINT holds it (`/v1/traces` is appended). */
  url: string;
  spans: ReceivedSpan[];
  /** Resolves once `pred` holds for the spans received so far. */
  until(pred: (spans: ReceivedSpan[]) => boolean, timeoutMs?: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

type AnyValue = { stringValue?: string; intValue?: number | string; boolValue?: boolean; doubleValue?: number };
type KeyValue = { key: string; value: AnyValue };

function attrs(list: KeyValue[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { key, value } of list ?? [])
    out[key] = value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : (value.boolValue ?? value.doubleValue));
  return out;
}

/** A plain node:http OTLP/HTTP receiver for JSON trace exports (what @opentelemetry/exporter-trace-otlp-http sends). */
export async function startOtlpReceiver(t: { after(fn: () => unknown): void }): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const wake: (() => void)[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url !== '/v1/traces' || !String(req.headers['content-type']).includes('json')) {
        res.writeHead(415).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans?: { resource?: { attributes?: KeyValue[] }; scopeSpans?: { spans?: Record<string, unknown>[] }[] }[];
      };
      for (const rs of body.resourceSpans ?? []) {
        const resource = attrs(rs.resource?.attributes);
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            spans.push({
              traceId: String(s['traceId']),
              spanId: String(s['spanId']),
              parentSpanId: s['parentSpanId'] ? String(s['parentSpanId']) : undefined,
              name: String(s['name']),
              kind: Number(s['kind']),
              attributes: attrs(s['attributes'] as KeyValue[]),
              resource,
              status: (s['status'] ?? {}) as ReceivedSpan['status'],
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      for (const w of wake.splice(0)) w();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = () => new Promise<void>((r) => server.close(() => r()));
  t.after(close);
  return {
    url,
    spans,
    async until(pred, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (!pred(spans)) {
        if (Date.now() > deadline) throw new Error(`OTLP receiver: condition not met; spans: ${spans.map((s) => s.name).join(', ')}`);
        await new Promise<void>((r) => {
          wake.push(r);
          setTimeout(r, 200).unref();
        });
      }
      return spans;
    },
    close,
  };
}
