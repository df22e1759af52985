import type { SseTimerTarget, SseTimers } from '../../src/http/sse-timers.js';

/**
 * The SSE timer wheel's contract on a clock the caller moves: a deadline fires on the first tick
 * at or after it, never before (as SseTimerWheel). Lets a test or the cycle bench run streams
 * for simulated hours at production settings in milliseconds.
 */
export class VirtualSseTimers implements SseTimers {
  readonly tickMs: number;
  #now = 0;
  readonly #pending = new Map<SseTimerTarget, number>();

  constructor({ tickMs }: { tickMs: number }) {
    this.tickMs = tickMs;
  }

  now(): number {
    return this.#now;
  }

  schedule(target: SseTimerTarget, dueMs: number): number {
    const key = Math.max(Math.ceil(dueMs / this.tickMs), Math.floor(this.#now / this.tickMs) + 1);
    this.#pending.set(target, key);
    return key;
  }

  cancel(target: SseTimerTarget, key: number): void {
    if (this.#pending.get(target) === key) this.#pending.delete(target);
  }

  /** Fires every deadline up to `t` in time order, then leaves the clock at `t`. */
  advanceTo(t: number): void {
    for (;;) {
      let next: [SseTimerTarget, number] | undefined;
      for (const entry of this.#pending) if (!next || entry[1] < next[1]) next = entry;
      if (!next || next[1] * this.tickMs > t) break;
      this.#pending.delete(next[0]);
      this.#now = next[1] * this.tickMs;
      next[0].onTimer(this.#now);
    }
    this.#now = Math.max(this.#now, t);
  }
}
