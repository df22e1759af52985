import type { Readable } from 'node:stream';
import { createParser, type EventSourceMessage } from 'eventsource-parser';

/**
 * How long a body may stay open after the vendor's last event before it is cancelled, in ms.
 * Vendors end the body right after it; a server that does not must not hold the turn.
 */
const END_GRACE_MS = 1_000;

/**
 * The items of a vendor's streaming response: each server-sent event through `decode` (which
 * returns the item, undefined to skip the event, or throws the vendor's error). The official SDK
 * makes the request (auth, headers, timeouts, its error classes for non-2xx answers) and hands
 * over the body (`.asResponse()`, `responseBody`: undici's Node stream when vendorFetch carried the
 * request, else the web stream); reading it here costs less than the SDKs' stream layers, which
 * run every chunk through several async generators and a promise race, and cancel the body after
 * the last event before the body has ended, aborting the fetch
 * (docs/decisions/0085-vendor-streams-eventsource-parser.md).
 *
 * `isLast(message)` names the vendor's final event: after it the body is read to its end (up to
 * `END_GRACE_MS`) instead of cancelled, so the connection goes back to the pool without an abort.
 * A consumer that stops early, or an abort of the request, cancels the body as before. One
 * generator from bytes to items: each layer of async iteration costs a promise per event.
 */
export async function* vendorSseItems<T>(
  body: Readable | ReadableStream<Uint8Array> | null,
  isLast: (message: EventSourceMessage) => boolean,
  decode: (message: EventSourceMessage) => T | undefined,
): AsyncGenerator<T> {
  if (!body) return;
  const reader = textReader(body);
  const parsed: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (message) => parsed.push(message) });
  let ended = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        ended = true;
        return;
      }
      parser.feed(value);
      for (let i = 0; i < parsed.length; i++) {
        const message = parsed[i]!;
        const item = decode(message);
        if (item !== undefined) yield item;
        if (isLast(message)) {
          ended = await readToEnd(reader);
          return;
        }
      }
      parsed.length = 0;
    }
  } finally {
    if (!ended) void reader.cancel().catch(() => undefined);
  }
}

/** Reads what follows the last event; true when the body ended within the grace period. */
async function readToEnd(reader: TextReader): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(resolve, END_GRACE_MS, 'late');
  });
  try {
    for (;;) {
      const next = await Promise.race([reader.read(), late]);
      if (next === 'late') return false;
      if (next.done) return true;
    }
  } catch {
    return true;
  } finally {
    clearTimeout(timer);
  }
}

/** The two calls the reading needs, on either kind of body: the next text, and giving up the rest. */
interface TextReader {
  read(): Promise<IteratorResult<string, unknown>>;
  cancel(): Promise<unknown>;
}

function textReader(body: Readable | ReadableStream<Uint8Array>): TextReader {
  if (body instanceof ReadableStream) {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    return {
      read: async () => {
        const next = await reader.read();
        return next.done ? next : { done: false, value: decoder.decode(next.value, { stream: true }) };
      },
      cancel: () => reader.cancel(),
    };
  }
  // The stream's own decoder keeps a character split across chunks whole.
  const texts = body.setEncoding('utf8')[Symbol.asyncIterator]() as AsyncIterator<string>;
  return {
    read: () => texts.next(),
    // Destroying the stream settles a pending read and frees the connection, as cancelling a web stream does.
    cancel: async () => void body.destroy(),
  };
}
