import { formatSseFrame, SSE_HEARTBEAT } from './sse-frame.js';

/** What an SSE stream writes to; the uWS adapter implements it with cork/onWritable discipline. */
export interface SseSink {
  /** Returns false when the chunk was buffered because of backpressure. */
  write(chunk: string): boolean;
  end(): void;
  /** Closes the socket at once (slow clients). */
  abort(): void;
}

export interface SseStreamOptions {
  heartbeatMs: number;
  cycleMs: number;
  /** Bytes buffered under backpressure before the client is dropped (it resumes with since_id). */
  maxBufferBytes: number;
  /** Random in [0,1); injected so tests can pin the jitter. */
  random?: () => number;
}

export const RETRY_FLOWING_MS = 100;
export const RETRY_IDLE_MAX_MS = 500;

/**
 * One client's event stream: heartbeats, connection cycling with ±20% jitter, `retry:` hints
 * and a bounded backlog. Frames arrive pre-serialised (formatSseFrame) and are written as is.
 */
export class SseStream {
  #sink: SseSink;
  #opts: SseStreamOptions;
  #open = true;
  #backlog: string[] = [];
  #backlogBytes = 0;
  #blocked = false;
  #retryMs = RETRY_FLOWING_MS;
  #beatTimer: NodeJS.Timeout | undefined;
  #cycleTimer: NodeJS.Timeout | undefined;
  #onClose: (() => void)[] = [];

  constructor(sink: SseSink, opts: SseStreamOptions) {
    this.#sink = sink;
    this.#opts = opts;
    const random = opts.random ?? Math.random;
    // Spread heartbeats so thousands of streams do not all beat in the same tick.
    const firstBeat = Math.max(1, Math.floor(opts.heartbeatMs * (0.5 + random() * 0.5)));
    this.#beatTimer = setTimeout(() => this.#beat(), firstBeat).unref();
    const cycleMs = Math.floor(opts.cycleMs * (0.8 + random() * 0.4));
    this.#cycleTimer = setTimeout(() => this.disconnect('connection_cycle'), cycleMs).unref();
  }

  get open(): boolean {
    return this.#open;
  }

  /** Writes a pre-serialised event frame with the `retry:` hint for a flowing stream. */
  send(frame: string): void {
    this.#retryMs = RETRY_FLOWING_MS;
    this.#write(`retry: ${RETRY_FLOWING_MS}\n` + frame);
  }

  /** Sends `disconnecting` and ends the stream; the client reconnects with since_id. */
  disconnect(reason: string): void {
    if (!this.#open) return;
    const data = JSON.stringify({ reason, retry_ms: RETRY_FLOWING_MS });
    this.#write(`retry: ${RETRY_FLOWING_MS}\n` + formatSseFrame({ event: 'disconnecting', data }));
    this.end();
  }

  /** Registers a cleanup to run once when the stream ends for any reason. */
  onClose(fn: () => void): void {
    if (this.#open) this.#onClose.push(fn);
    else fn();
  }

  /** Graceful end: flushes what is buffered (uWS keeps it) and finishes the response. */
  end(): void {
    if (!this.#open) return;
    this.#sink.end();
    this.closed();
  }

  /** Called by the adapter when the client went away (or after end/abort). */
  closed(): void {
    if (!this.#open) return;
    this.#open = false;
    clearTimeout(this.#beatTimer);
    clearTimeout(this.#cycleTimer);
    this.#backlog = [];
    for (const fn of this.#onClose.splice(0)) fn();
  }

  /** Called by the adapter when the socket drained; writes what waited. */
  drain(): void {
    this.#blocked = false;
    while (this.#open && !this.#blocked && this.#backlog.length) {
      const chunk = this.#backlog.shift()!;
      this.#backlogBytes -= chunk.length;
      if (!this.#sink.write(chunk)) this.#blocked = true;
    }
  }

  #write(chunk: string): void {
    if (!this.#open) return;
    if (this.#blocked) {
      this.#backlog.push(chunk);
      this.#backlogBytes += chunk.length;
      if (this.#backlogBytes > this.#opts.maxBufferBytes) {
        this.#sink.abort();
        this.closed();
      }
      return;
    }
    if (!this.#sink.write(chunk)) this.#blocked = true;
  }

  #beat(): void {
    if (!this.#open) return;
    this.#write(`retry: ${this.#retryMs}\n` + SSE_HEARTBEAT);
    // Idle: back the reconnect hint off towards its maximum.
    this.#retryMs = Math.min(RETRY_IDLE_MAX_MS, this.#retryMs * 2);
    this.#beatTimer = setTimeout(() => this.#beat(), this.#opts.heartbeatMs).unref();
  }
}
