import { createParser, type EventSourceMessage } from 'eventsource-parser';

export type SseItem = { kind: 'message'; message: EventSourceMessage } | { kind: 'retry'; ms: number };

/** The body went quiet for longer than the read timeout (no event, no heartbeat). */
export class ReadTimeoutError extends Error {
  constructor(ms: number) {
    super(`no data for ${ms} ms`);
    this.name = 'ReadTimeoutError';
  }
}

/**
 * Parses one SSE response body as it arrives (fetch + eventsource-parser; no Node-only API, so
 * it runs in browsers too). Throws `ReadTimeoutError` when nothing (heartbeats included) arrives
 * for `readTimeoutMs`. The reader is released when the consumer stops early.
 */
export async function* readSse(body: ReadableStream<Uint8Array>, readTimeoutMs: number): AsyncGenerator<SseItem> {
  const pending: SseItem[] = [];
  const parser = createParser({
    onEvent: (message) => pending.push({ kind: 'message', message }),
    onRetry: (ms) => pending.push({ kind: 'retry', ms }),
  });
  const reader = body.getReader();
  const decoder = new TextDecoder();
  try {
    for (;;) {
      const { done, value } = await readWithTimeout(reader, readTimeoutMs);
      if (done) return;
      parser.feed(decoder.decode(value, { stream: true }));
      while (pending.length) yield pending.shift()!;
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}

function readWithTimeout(reader: ReadableStreamDefaultReader<Uint8Array>, ms: number): Promise<ReadableStreamReadResult<Uint8Array>> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ReadTimeoutError(ms)), ms);
  });
  return Promise.race([reader.read(), timeout]).finally(() => clearTimeout(timer));
}
