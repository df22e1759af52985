import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A scripted fake LLM vendor on 127.0.0.1:<random port>. Each vendor module supplies a
 * codec (routes, auth check, SSE encoding, error bodies); this module runs the queue of
 * scripted steps and records every request. Reused by the turn-engine tests.
 */

/** A model answer in neutral terms; each codec encodes it as its vendor streams it. */
export interface FakeReply {
  thinking?: string[];
  text?: string[];
  tool_calls?: { id: string; name: string; arguments: Record<string, unknown> }[];
  /** Neutral usage: input_tokens includes cache reads. Default {10, 5, 0}. */
  usage?: { input_tokens: number; output_tokens: number; cache_read_tokens: number };
  stop?: 'end' | 'max_tokens';
  /** Opaque signature the vendor attaches to thinking (Anthropic, Gemini). */
  signature?: string;
}

export type FakeStep =
  /** `after`: the answer starts once it settles, so a test can look while the call is in flight. */
  | { type: 'reply'; reply: FakeReply; frame_delay_ms?: number; after?: Promise<unknown> }
  /** An HTTP error with the vendor's error body; `retry_after` is sent as Retry-After. */
  | { type: 'error'; status: number; retry_after?: string; body?: object }
  /** Streams the first `after_frames` SSE frames of `reply`, then destroys the socket. */
  | { type: 'cut'; reply: FakeReply; after_frames: number }
  /** Streams these raw SSE frames (or bytes), `frame_delay_ms` apart; `hold_open` leaves the body open until the client goes. */
  | { type: 'frames'; frames: (string | Uint8Array)[]; hold_open?: boolean; frame_delay_ms?: number };

export interface RecordedRequest {
  method: string;
  /** Path with query string. */
  url: string;
  headers: IncomingMessage['headers'];
  body: any;
  /** The body's bytes as received (bench/long-session reports their length without encoding the body again). */
  raw: Buffer;
}

export interface FakeModel {
  id: string;
  display_name: string;
  /** Listed as Gemini `inputTokenLimit` / Anthropic `max_input_tokens` when set. */
  input_limit?: number;
  /** Listed as Gemini `outputTokenLimit` / Anthropic `max_tokens` when set. */
  output_limit?: number;
}

export interface VendorCodec {
  /** Which route a request hits, or undefined for 404. */
  route(method: string, url: string): 'generate' | 'models' | undefined;
  authorized(headers: IncomingMessage['headers'], apiKey: string): boolean;
  /** Complete SSE frames ("event: …\ndata: …\n\n") for a reply to `body`, sent to `url`. */
  encode(reply: FakeReply, body: any, url: string): string[];
  errorBody(status: number): object;
  modelsBody(models: FakeModel[]): object;
}

export interface FakeServerOptions {
  /** The key the fake accepts (default 'test-key'); any other gets 401. */
  api_key?: string;
  models?: FakeModel[];
  /** Computes the step for a generation request when the queue is empty. */
  respond?: (request: RecordedRequest) => FakeStep;
  /** Reads a request's non-empty body (default: its JSON, or its text when that is not JSON). */
  parseBody?: (raw: Buffer) => unknown;
}

export interface FakeLlmServer {
  /** http://127.0.0.1:<port> */
  origin: string;
  requests: RecordedRequest[];
  /** TCP connections accepted so far (a client that reuses its connections opens few). */
  connections(): number;
  /** Queues steps for the next generation requests, in order. */
  enqueue(...steps: FakeStep[]): void;
  close(): Promise<void>;
}

const DEFAULT_STEP: FakeStep = { type: 'reply', reply: { text: ['ok'] } };

async function readBody(req: IncomingMessage, parseBody = parseJsonBody): Promise<{ raw: Buffer; body: any }> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const raw = Buffer.concat(chunks);
  return { raw, body: raw.length ? parseBody(raw) : undefined };
}

function parseJsonBody(raw: Buffer): unknown {
  const text = raw.toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function sendJson(res: ServerResponse, status: number, body: object, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

function write(res: ServerResponse, frame: string | Uint8Array): Promise<void> {
  return new Promise((resolve) => res.write(frame, () => resolve()));
}

async function stream(res: ServerResponse, frames: (string | Uint8Array)[], step: FakeStep): Promise<void> {
  if (step.type === 'reply' && step.after) await step.after;
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const limit = step.type === 'cut' ? step.after_frames : frames.length;
  const delay = step.type === 'reply' || step.type === 'frames' ? (step.frame_delay_ms ?? 0) : 0;
  for (const frame of frames.slice(0, limit)) {
    if (res.destroyed) return;
    await write(res, frame);
    if (delay) await new Promise((r) => setTimeout(r, delay));
  }
  if (step.type === 'cut') res.socket?.destroy();
  else if (step.type !== 'frames' || !step.hold_open) res.end();
}

/** Starts a fake vendor server for `codec`. */
export async function startFakeServer(codec: VendorCodec, opts: FakeServerOptions = {}): Promise<FakeLlmServer> {
  const apiKey = opts.api_key ?? 'test-key';
  const queue: FakeStep[] = [];
  const requests: RecordedRequest[] = [];
  const server = createServer(async (req, res) => {
    const { raw, body } = await readBody(req, opts.parseBody);
    const recorded: RecordedRequest = { method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body, raw };
    requests.push(recorded);
    const route = codec.route(recorded.method, recorded.url);
    if (!route) return sendJson(res, 404, codec.errorBody(404));
    if (!codec.authorized(req.headers, apiKey)) return sendJson(res, 401, codec.errorBody(401));
    if (route === 'models') return sendJson(res, 200, codec.modelsBody(opts.models ?? []));
    const step = queue.shift() ?? opts.respond?.(recorded) ?? DEFAULT_STEP;
    if (step.type === 'error') {
      return sendJson(
        res,
        step.status,
        step.body ?? codec.errorBody(step.status),
        step.retry_after ? { 'retry-after': step.retry_after } : {},
      );
    }
    await stream(res, step.type === 'frames' ? step.frames : codec.encode(step.reply, body, recorded.url), step);
  });
  let connections = 0;
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    connections: () => connections,
    enqueue: (...steps) => void queue.push(...steps),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** One SSE frame; `event` omitted for data-only protocols. */
export function sseFrame(data: unknown, event?: string, eol = '\n'): string {
  return `${event ? `event: ${event}${eol}` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}${eol}${eol}`;
}

/** Splits a JSON string into `parts` fragments, as vendors stream tool arguments. */
export function fragments(text: string, parts = 3): string[] {
  const size = Math.max(1, Math.ceil(text.length / parts));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out.length ? out : [''];
}

export const DEFAULT_FAKE_USAGE = { input_tokens: 10, output_tokens: 5, cache_read_tokens: 0 };
