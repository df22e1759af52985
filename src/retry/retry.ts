import { type Backoff, pauseMs } from './backoff.js';
import { abortableSleep, abortReason } from './sleep.js';

/** When a failed attempt is tried again, and how long to pause before it (src/retry/policies.ts names them). */
export interface RetryPolicy {
  /** Said in log lines and errors. */
  readonly name: string;
  /** Attempts in all, the first included; Infinity: until the deadline or forever. */
  readonly maxAttempts: number;
  /**
   * No attempt starts later than this after the first one started; the pause before the last one
   * is cut so that it starts at the deadline (a store back just before it is not missed). Absent: no deadline.
   */
  readonly deadlineMs?: number;
  readonly backoff: Backoff;
}

/** What the caller of one retry loop adds to its policy; `E` is what its attempts fail with. */
export interface RetryOptions<E = unknown> {
  /** Stops the loop: a pause rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Failures worth another attempt (default: every failure). */
  retryable?: (err: E) => boolean;
  /** A pause the failure asks for itself (a vendor's Retry-After) instead of the backoff's. */
  pauseFor?: (err: E) => number | undefined;
  /** Hears of each retry before its pause (for a log line or a metric). */
  onRetry?: (retry: RetryEvent<E>) => void;
  /** Injected by tests (hears every pause, 0 included); must reject with the signal's reason when it aborts. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  now?: () => number;
  random?: () => number;
}

export interface RetryEvent<E = unknown> {
  readonly err: E;
  /** The attempt that failed (1 for the first). */
  readonly attempt: number;
  readonly pauseMs: number;
  readonly policy: RetryPolicy;
}

/** One retry loop's state, for loops that cannot be a single function call (streams, results that are not errors). */
export interface Retrier<E = unknown> {
  /** The attempt running now (1 for the first). */
  readonly attempt: number;
  /**
   * The attempt failed with `err`: pauses and resolves true when the policy allows another
   * attempt, resolves false when it does not (the caller throws what it should). Rejects with
   * the abort reason when the signal fires.
   */
  failed(err: E): Promise<boolean>;
}

/** Starts a retry loop under `policy`; the clock for its deadline starts now. */
export function retrier<E = unknown>(policy: RetryPolicy, opts: RetryOptions<E> = {}): Retrier<E> {
  const now = opts.now ?? Date.now;
  const sleep = opts.sleep ?? abortableSleep;
  const startedAt = now();
  let attempt = 1;
  return {
    get attempt() {
      return attempt;
    },
    async failed(err) {
      const { signal } = opts;
      if (signal?.aborted) throw abortReason(signal);
      if (attempt >= policy.maxAttempts) return false;
      if (opts.retryable && !opts.retryable(err)) return false;
      let pause = opts.pauseFor?.(err) ?? pauseMs(policy.backoff, attempt, opts.random);
      if (policy.deadlineMs !== undefined) {
        const left = startedAt + policy.deadlineMs - now();
        if (left <= 0) return false;
        pause = Math.min(pause, left);
      }
      opts.onRetry?.({ err, attempt, pauseMs: pause, policy });
      // A pause of 0 is taken at once (an optimistic append's next round); an injected sleep hears it too.
      if (pause > 0 || opts.sleep) await sleep(pause, signal);
      attempt++;
      return true;
    },
  };
}

/** Runs `fn` under `policy`: the first success, or the last failure once the policy gives up. */
export async function retry<T>(fn: (attempt: number) => Promise<T>, policy: RetryPolicy, opts: RetryOptions = {}): Promise<T> {
  const loop = retrier(policy, opts);
  for (;;) {
    try {
      return await fn(loop.attempt);
    } catch (err) {
      if (!(await loop.failed(err))) throw err;
    }
  }
}
