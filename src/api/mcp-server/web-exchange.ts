/**
 * The adapter between our route and the MCP SDK's web-standard transport: the route's input
 * becomes a `Request` (the SDK reads its method and headers; the body goes in already parsed),
 * and the SDK's `Response` becomes our reply. The SDK answers a refusal (wrong Accept, a body
 * that is not JSON-RPC) with a JSON-RPC error document; it is put in our `{error, status}` shape,
 * like every other 4xx of the API (MCP clients read only the status and the text of a refusal).
 * An SSE answer (a call that asked for progress) goes out through our SSE stream, the SDK's
 * frames as it wrote them (it frames JSON-RPC; formatSseFrame frames our events).
 */
import type { SseReply, SseStream } from '../../http/index.js';
import { MCP_SESSION_HEADER } from './call-cancel.js';

/** Only these reach the SDK: it checks Accept and Content-Type, and the protocol version. */
const FORWARDED_HEADERS = ['accept', 'content-type', 'mcp-protocol-version'] as const;

/** Statuses the stateless JSON transport refuses with (405 cannot happen: the route is POST only). */
export type McpRefusalStatus = 400 | 406 | 415;

export type McpReply =
  | { status: 200; raw: string; contentType: 'application/json'; headers?: Record<string, string> }
  | SseReply
  | { status: 202 }
  | { status: McpRefusalStatus; body: { error: string; status: number } };

export function toWebRequest(url: string, headers: Readonly<Record<string, string>>): Request {
  const forwarded = new Headers();
  for (const name of FORWARDED_HEADERS) {
    const value = headers[name];
    if (value !== undefined) forwarded.set(name, value);
  }
  return new Request(url, { method: 'POST', headers: forwarded });
}

/** A JSON-RPC answer as it is, an accepted notification as 202 without a body, a refusal in our error shape. */
export async function fromWebResponse(res: Response): Promise<McpReply> {
  const text = await res.text();
  if (res.status === 200 && text) {
    // Issued at initialize: the client sends it back on every request (call-cancel.ts).
    const session = res.headers.get(MCP_SESSION_HEADER);
    return { status: 200, raw: text, contentType: 'application/json', ...(session ? { headers: { [MCP_SESSION_HEADER]: session } } : {}) };
  }
  if (res.status < 300) return { status: 202 };
  if (res.status >= 500) throw new Error(`the MCP transport answered ${res.status}`); // the error stage: a 500 that names nothing
  const status: McpRefusalStatus = res.status === 406 || res.status === 415 ? res.status : 400;
  return { status, body: { error: errorText(text, status), status } };
}

/** The JSON-RPC error's message, or a plain one for a body that is not one. */
function errorText(body: string, status: McpRefusalStatus): string {
  try {
    const message = (JSON.parse(body) as { error?: { message?: unknown } }).error?.message;
    if (typeof message === 'string' && message) return message.slice(0, 500);
  } catch {
    // not JSON: a plain message below
  }
  return status === 406 ? 'Not acceptable' : status === 415 ? 'Unsupported media type' : 'Invalid request';
}

/** Whether the SDK answered with an event stream rather than JSON. */
export function isEventStream(res: Response): boolean {
  return res.status === 200 && res.body !== null && (res.headers.get('content-type') ?? '').startsWith('text/event-stream');
}

/**
 * The SDK's event stream on ours, never cycled: it ends when the SDK has sent the last answer
 * (or the client left). `onEnd` runs once, either way, when nothing more will be written.
 */
export function streamReply(res: Response, onEnd: () => void): SseReply {
  const reader = res.body!.getReader();
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    reader.cancel().catch(() => {}); // a finished body ignores it; an open one stops the SDK's writes
    onEnd();
  };
  return {
    cycle: false,
    sse(stream) {
      stream.onClose(end);
      pipe(reader, stream).finally(() => stream.end());
    },
    abandon: end,
  };
}

async function pipe(reader: ReadableStreamDefaultReader<Uint8Array>, stream: SseStream): Promise<void> {
  const decoder = new TextDecoder();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done || !stream.open) return;
      // The SDK enqueues one whole event per chunk, so our heartbeats fall between its events.
      stream.sendFlowing(decoder.decode(value, { stream: true }));
    }
  } catch {
    // cancelled because the client left: the stream is closed already
  }
}
