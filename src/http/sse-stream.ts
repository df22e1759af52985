import { formatSseFrame, SSE_HEARTBEAT } from './sse-frame.js';
import type { SseObserver } from './sse-observer.js';
import type { TimerTarget, Timers } from '../timers/index.js';

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
  /**
   * Within the cycle window, the stream cycles once no event has been written to it for this
   * long (default 1000 ms; 0 cycles as soon as the window opens), so `disconnecting` never
   * shares a network read with events (a client may drop events read together with it).
   */
  quietMs?: number;
  /** Bytes buffered under backpressure before the client is dropped (it resumes with since_id). */
  maxBufferBytes: number;
  /** Random in [0,1); injected so tests can pin the jitter. */
  random?: () => number;
  /** SSE metrics (src/observability); absent when metrics are off. */
  observer?: SseObserver | null;
}

export const RETRY_FLOWING_MS = 100;
export const DEFAULT_CYCLE_QUIET_MS = 1000;
/** The cycle window: the stream may cycle from 80 % of cycleMs (jittered up to 110 %) and cycles by 120 %. */
const CYCLE_EARLIEST = 0.8;
const CYCLE_JITTER = 0.3;
const CYCLE_LATEST = 1.2;
export const RETRY_IDLE_MAX_MS = 500;

/** A frame with the `retry:` hint of a flowing stream, for SseStream.sendFlowing. */
export function flowingFrame(frame: string): string {
  return `retry: ${RETRY_FLOWING_MS}\n` + frame;
}

type CloseFn = (stream: SseStream) => void;

/**
 * One client's event stream: heartbeats, connection cycling with ±20% jitter, `retry:` hints
 * and a bounded backlog. Frames arrive pre-serialised (formatSseFrame) and are written as is.
 * Both deadlines live on the server's shared timer wheel (one entry per stream), and the
 * backlog exists only while the socket pushes back: an idle stream is this object and its sink.
 *
 * Cycling waits for a quiet moment: from a jittered point in [80 %, 110 %] of the cycle the
 * stream cycles at the first check that finds `quietMs` without an event written and nothing
 * buffered. If none comes, it stops writing events `quietMs` before 120 % (the client gets
 * them after reconnecting with since_id) and cycles at 120 %, so `disconnecting` always
 * follows a quiet gap and is a write of its own (docs/decisions/0050-sse-cycling-at-quiet-moment.md).
 */
export class SseStream implements TimerTarget {
  #sink: SseSink;
  #opts: SseStreamOptions;
  #timers: Timers;
  #open = true;
  #backlog: string[] | null = null;
  #backlogBytes = 0;
  #blocked = false;
  #retryMs = RETRY_FLOWING_MS;
  #beatAt: number;
  #quietMs: number;
  /** The stream may cycle from here (jittered), when quiet. */
  #cycleFrom: number;
  /** From here events are held back, so that a quiet gap comes before #cycleBy. */
  #holdFrom: number;
  /** The end of the window: the stream cycles by then. */
  #cycleBy: number;
  #holding = false;
  /** When the last event frame was written (not heartbeats); -Infinity before the first. */
  #lastEventAt = -Infinity;
  /** Bucket of this stream's pending deadline on the wheel (the earlier of beat and cycle). */
  #timerKey: number;
  /**
   * Cleanups: none, one, or an array made at the second (an array pushed to from empty
   * reserves 17 slots: about 150 bytes per idle stream for one or two functions).
   */
  #onClose: CloseFn | CloseFn[] | null = null;

  constructor(sink: SseSink, opts: SseStreamOptions, timers: Timers) {
    this.#sink = sink;
    this.#opts = opts;
    this.#timers = timers;
    const random = opts.random ?? Math.random;
    const now = timers.now();
    // Spread heartbeats so thousands of streams do not all beat in the same tick.
    this.#beatAt = now + Math.max(1, Math.floor(opts.heartbeatMs * (0.5 + random() * 0.5)));
    this.#quietMs = opts.quietMs ?? DEFAULT_CYCLE_QUIET_MS;
    this.#cycleFrom = now + Math.floor(opts.cycleMs * (CYCLE_EARLIEST + random() * CYCLE_JITTER));
    this.#cycleBy = now + Math.floor(opts.cycleMs * CYCLE_LATEST);
    this.#holdFrom = Math.max(this.#cycleFrom, this.#cycleBy - this.#quietMs);
    this.#timerKey = timers.schedule(this, Math.min(this.#beatAt, this.#cycleFrom));
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
    // Held back before cycling: the client reads these after it reconnects with since_id.
    if (this.#holding) return;
    this.#retryMs = RETRY_FLOWING_MS;
    this.#lastEventAt = this.#timers.now();
    this.#write(prefixed);
  }

  /** Whether `disconnecting` now would be read apart from any event: nothing written for quietMs, nothing buffered. */
  #quiet(now: number): boolean {
    return !this.#blocked && now - this.#lastEventAt >= this.#quietMs;
  }

  /** When the cycle logic next needs a look (never past the window's end). */
  #nextCycleCheck(now: number): number {
    if (now < this.#cycleFrom) return this.#cycleFrom;
    const quietAt = Math.max(this.#lastEventAt + this.#quietMs, now);
    return Math.min(quietAt, this.#holding ? this.#cycleBy : this.#holdFrom, this.#cycleBy);
  }

  /** Sends `disconnecting` (one write of its own, never batched with events) and ends the stream; the client reconnects with since_id. */
  disconnect(reason: string): void {
    if (!this.#open) return;
    if (reason === 'connection_cycle') this.#opts.observer?.cycled();
    const data = JSON.stringify({ reason, retry_ms: RETRY_FLOWING_MS });
    this.#write(`retry: ${RETRY_FLOWING_MS}\n` + formatSseFrame({ event: 'disconnecting', data }));
    this.end();
  }

  /** Registers a cleanup to run once when the stream ends for any reason; it gets the stream, so one function can serve many. */
  onClose(fn: CloseFn): void {
    if (!this.#open) return fn(this);
    const had = this.#onClose;
    if (had === null) this.#onClose = fn;
    else if (typeof had === 'function') this.#onClose = [had, fn];
    else had.push(fn);
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
    const fns = this.#onClose;
    this.#onClose = null;
    if (typeof fns === 'function') fns(this);
    else if (fns) for (const fn of fns) fn(this);
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
    if (now >= this.#cycleFrom) {
      if (this.#quiet(now) || now >= this.#cycleBy) return this.disconnect('connection_cycle');
      if (now >= this.#holdFrom) this.#holding = true;
    }
    if (now >= this.#beatAt) {
      this.#beat();
      if (!this.#open) return; // the beat found the backlog full and dropped the client
      // From the deadline, not from now, so the wheel's lateness does not add up beat after beat.
      this.#beatAt += this.#opts.heartbeatMs;
      if (this.#beatAt <= now) this.#beatAt = now + this.#opts.heartbeatMs; // after a stall: no burst
    }
    this.#timerKey = this.#timers.schedule(this, Math.min(this.#beatAt, this.#nextCycleCheck(now)));
  }

  #write(chunk: string): void {
    if (!this.#open) return;
    if (this.#blocked) {
      (this.#backlog ??= []).push(chunk);
      this.#backlogBytes += chunk.length;
      if (this.#backlogBytes > this.#opts.maxBufferBytes) {
        this.#opts.observer?.dropped();
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
