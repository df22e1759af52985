import { formatSseFrame, SSE_HEARTBEAT } from './sse-frame.js';
import type { SseTimerTarget, SseTimerWheel } from './sse-timers.js';

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

/** A frame with the `retry:` hint of a flowing stream, for SseStream.sendFlowing. */
export function flowingFrame(frame: string): string {
  return `retry: ${RETRY_FLOWING_MS}\n` + frame;
}

/**
 * One client's event stream: heartbeats, connection cycling with ±20% jitter, `retry:` hints
 * and a bounded backlog. Frames arrive pre-serialised (formatSseFrame) and are written as is.
 * Both deadlines live on the server's shared timer wheel (one entry per stream), and the
 * backlog exists only while the socket pushes back: an idle stream is this object and its sink.
 */
export class SseStream implements SseTimerTarget {
  #sink: SseSink;
  #opts: SseStreamOptions;
  #timers: SseTimerWheel;
  #open = true;
  #backlog: string[] | null = null;
  #backlogBytes = 0;
  #blocked = false;
  #retryMs = RETRY_FLOWING_MS;
  #beatAt: number;
  #cycleAt: number;
  /** Bucket of this stream's pending deadline on the wheel (the earlier of beat and cycle). */
  #timerKey: number;
  #onClose: ((stream: SseStream) => void)[] = [];

  constructor(sink: SseSink, opts: SseStreamOptions, timers: SseTimerWheel) {
    this.#sink = sink;
    this.#opts = opts;
    this.#timers = timers;
    const random = opts.random ?? Math.random;
    const now = timers.now();
    // Spread heartbeats so thousands of streams do not all beat in the same tick.
    this.#beatAt = now + Math.max(1, Math.floor(opts.heartbeatMs * (0.5 + random() * 0.5)));
    this.#cycleAt = now + Math.floor(opts.cycleMs * (0.8 + random() * 0.4));
    this.#timerKey = timers.schedule(this, Math.min(this.#beatAt, this.#cycleAt));
  }

  get open(): boolean {
    return this.#open;
  }

  /** Writes a pre-serialised event frame with the `retry:` hint for a flowing stream. */
  send(frame: string): void {
    this.sendFlowing(flowingFrame(frame));
  }

  /** Writes a frame already prefixed by flowingFrame(): one string for all clients of an event. */
  sendFlowing(prefixed: string): void {
    this.#retryMs = RETRY_FLOWING_MS;
    this.#write(prefixed);
  }

  /** Sends `disconnecting` and ends the stream; the client reconnects with since_id. */
  disconnect(reason: string): void {
    if (!this.#open) return;
    const data = JSON.stringify({ reason, retry_ms: RETRY_FLOWING_MS });
    this.#write(`retry: ${RETRY_FLOWING_MS}\n` + formatSseFrame({ event: 'disconnecting', data }));
    this.end();
  }

  /** Registers a cleanup to run once when the stream ends for any reason; it gets the stream, so one function can serve many. */
  onClose(fn: (stream: SseStream) => void): void {
    if (this.#open) this.#onClose.push(fn);
    else fn(this);
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
    this.#timers.cancel(this, this.#timerKey);
    this.#backlog = null;
    for (const fn of this.#onClose.splice(0)) fn(this);
  }

  /** Called by the adapter when the socket drained; writes what waited. */
  drain(): void {
    this.#blocked = false;
    while (this.#open && !this.#blocked && this.#backlog?.length) {
      const chunk = this.#backlog.shift()!;
      this.#backlogBytes -= chunk.length;
      if (!this.#sink.write(chunk)) this.#blocked = true;
    }
    if (!this.#blocked) this.#backlog = null;
  }

  /** Called by the timer wheel at (or just after) the earlier of the two deadlines. */
  onTimer(now: number): void {
    if (!this.#open) return;
    if (now >= this.#cycleAt) return this.disconnect('connection_cycle');
    if (now >= this.#beatAt) {
      this.#beat();
      if (!this.#open) return; // the beat found the backlog full and dropped the client
      // From the deadline, not from now, so the wheel's lateness does not add up beat after beat.
      this.#beatAt += this.#opts.heartbeatMs;
      if (this.#beatAt <= now) this.#beatAt = now + this.#opts.heartbeatMs; // after a stall: no burst
    }
    this.#timerKey = this.#timers.schedule(this, Math.min(this.#beatAt, this.#cycleAt));
  }

  #write(chunk: string): void {
    if (!this.#open) return;
    if (this.#blocked) {
      (this.#backlog ??= []).push(chunk);
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
  }
}
