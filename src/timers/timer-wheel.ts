/** Coarsest and finest resolution of the wheel, in ms. */
const MAX_TICK_MS = 1000;
const MIN_TICK_MS = 5;
/** Ticks per shortest interval the wheel serves: deadlines fire at most 1/20 of it late. */
const TICKS_PER_INTERVAL = 20;

/** Something with one pending deadline on the wheel; `onTimer` reschedules it if needed. */
export interface TimerTarget {
  onTimer(now: number): void;
}

/** What a user of the wheel needs of it; a bench or test may drive it on a clock of its own. */
export interface Timers {
  now(): number;
  schedule(target: TimerTarget, dueMs: number): number;
  cancel(target: TimerTarget, key: number): void;
}

/**
 * One timer for many deadlines (every SSE stream's heartbeat and cycle, every live feed's idle
 * poll): deadlines in buckets of `tickMs`, swept by one interval, instead of a `Timeout` (with
 * its closure and timer-list entry) per deadline. A deadline fires on the first sweep at or after it, never
 * before, so it is late by at most one tick. Each target has at most one pending deadline.
 */
export class TimerWheel implements Timers {
  readonly tickMs: number;
  readonly #buckets = new Map<number, Set<TimerTarget>>();
  #lastSwept: number;
  #interval: NodeJS.Timeout | undefined;

  /** `shortestMs`: the shortest interval scheduled (e.g. min(heartbeat, 80 % of the cycle)), in ms. */
  constructor({ shortestMs }: { shortestMs: number }) {
    this.tickMs = Math.min(MAX_TICK_MS, Math.max(MIN_TICK_MS, Math.floor(shortestMs / TICKS_PER_INTERVAL)));
    this.#lastSwept = Math.floor(performance.now() / this.tickMs);
  }

  /** The current time on the wheel's clock (performance.now()), in ms. */
  now(): number {
    return performance.now();
  }

  /** Puts `target` in the bucket of `dueMs` (wheel clock); returns the bucket key for cancel(). */
  schedule(target: TimerTarget, dueMs: number): number {
    if (!this.#interval) {
      // Idle until now: start sweeping from the present instead of walking the idle ticks.
      this.#lastSwept = Math.floor(performance.now() / this.tickMs);
      this.#interval = setInterval(() => this.#sweep(), this.tickMs).unref();
    }
    const key = Math.max(Math.ceil(dueMs / this.tickMs), this.#lastSwept + 1);
    let bucket = this.#buckets.get(key);
    if (!bucket) this.#buckets.set(key, (bucket = new Set()));
    bucket.add(target);
    return key;
  }

  cancel(target: TimerTarget, key: number): void {
    const bucket = this.#buckets.get(key);
    if (!bucket?.delete(target) || bucket.size > 0) return;
    this.#buckets.delete(key);
    if (this.#buckets.size === 0) this.#stop();
  }

  /** Pending deadlines (streams with a timer). */
  get size(): number {
    let n = 0;
    for (const bucket of this.#buckets.values()) n += bucket.size;
    return n;
  }

  #sweep(): void {
    const now = performance.now();
    const upTo = Math.floor(now / this.tickMs);
    // Walks every tick since the last sweep, so a blocked event loop delays deadlines but never skips them.
    for (let key = this.#lastSwept + 1; key <= upTo; key++) {
      this.#lastSwept = key;
      const bucket = this.#buckets.get(key);
      if (!bucket) continue;
      this.#buckets.delete(key);
      for (const target of bucket) {
        try {
          target.onTimer(now);
        } catch (err) {
          // As loud as a throwing setTimeout callback, without skipping the rest of the bucket.
          queueMicrotask(() => {
            throw err;
          });
        }
      }
    }
    if (this.#buckets.size === 0) this.#stop();
  }

  #stop(): void {
    clearInterval(this.#interval);
    this.#interval = undefined;
  }
}
