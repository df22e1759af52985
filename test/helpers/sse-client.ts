import { createParser, type EventSourceMessage } from 'eventsource-parser';

export interface SseEvent {
  id?: string;
  event: string;
  data: string;
}

export interface SseConnection {
  status: number;
  /** Parsed events in arrival order (includes `connected` and `disconnecting`). */
  events: SseEvent[];
  /** Comment lines seen (heartbeats), with arrival times. */
  comments: { text: string; at: number }[];
  /** `retry:` values in arrival order. */
  retries: number[];
  /** Resolves when the server ends the stream or close() is called. */
  done: Promise<void>;
  /** Resolves once `n` events (after `connected`) matching `pred` have arrived, or rejects after timeoutMs. */
  waitFor(pred: (e: SseEvent) => boolean, n?: number, timeoutMs?: number): Promise<SseEvent[]>;
  close(): void;
  /** Body of a non-200 answer (JSON error). */
  errorBody?: unknown;
}

/** A streaming SSE client on fetch + eventsource-parser: what a browser EventSource would see. */
export async function openSse(
  url: string,
  { key, headers = {} }: { key?: string | null; headers?: Record<string, string> } = {},
): Promise<SseConnection> {
  const ac = new AbortController();
  const h: Record<string, string> = { accept: 'text/event-stream', ...headers };
  if (key) h['authorization'] = `Bearer ${key}`;
  const res = await fetch(url, { headers: h, signal: ac.signal });
  const events: SseEvent[] = [];
  const comments: { text: string; at: number }[] = [];
  const retries: number[] = [];
  const waiters = new Set<() => void>();
  const conn: SseConnection = {
    status: res.status,
    events,
    comments,
    retries,
    done: Promise.resolve(),
    close: () => ac.abort(),
    waitFor(pred, n = 1, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const hits = events.filter(pred);
          if (hits.length >= n) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(hits);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`timed out waiting for ${n} events; have ${events.filter(pred).length}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
  };
  if (res.status !== 200) {
    conn.errorBody = await res.json().catch(() => undefined);
    return conn;
  }
  const parser = createParser({
    onEvent: (m: EventSourceMessage) => {
      events.push({ id: m.id, event: m.event ?? 'message', data: m.data });
      for (const w of [...waiters]) w();
    },
    onComment: (text) => comments.push({ text: text.trim(), at: Date.now() }),
    onRetry: (ms) => retries.push(ms),
  });
  conn.done = (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }));
    } catch {
      // aborted by close()
    }
    for (const w of [...waiters]) w();
  })();
  return conn;
}
