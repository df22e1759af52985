import type { TimerTarget, Timers } from '../../src/timers/index.js';

/**
 * The SSE timer wheel's contract on a clock the caller moves: a deadline fires on the first tick
 * at or after it, never before (as TimerWheel). Lets a test or the cycle bench run streams
 * for simulated hours at production settings in milliseconds.
 */
export class VirtualSseTimers implements Timers {
  readonly tickMs: number;
  #now = 0;
  readonly #pending = new Map<TimerTarget, number>();

  constructor({ tickMs }: { tickMs: number }) {
    this.tickMs = tickMs;
  }

  now(): number {
    return this.#now;
  }

  schedule(target: TimerTarget, dueMs: number): number {
    const key = Math.max(Math.ceil(dueMs / this.tickMs), Math.floor(this.#now / this.tickMs) + 1);
    this.#pending.set(target, key);
    return key;
  }

  cancel(target: TimerTarget, key: number): void {
    if (this.#pending.get(target) === key) this.#pending.delete(target);
  }

  /** Fires every deadline up to `t` in time order, then leaves the clock at `t`. */
  advanceTo(t: number): void {
    for (;;) {
      let next: [TimerTarget, number] | undefined;
      for (const entry of this.#pending) if (!next || entry[1] < next[1]) next = entry;
      if (!next || next[1] * this.tickMs > t) break;
      this.#pending.delete(next[0]);
      this.#now = next[1] * this.tickMs;
      next[0].onTimer(this.#now);
    }
    this.#now = Math.max(this.#now, t);
  }
}
