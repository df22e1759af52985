/** Pure decisions after a failed attempt: when to try again, and whether the endpoint has failed long enough to be disabled. */

export interface RetryPolicy {
  retryBaseMs: number;
  retryMaxDelayMs: number;
  retryWindowMs: number;
}

/**
 * The pause before attempt `attempt + 1`: exponential from `retryBaseMs`, capped, with "equal
 * jitter" (half fixed, half random) so a receiver that comes back is not hit by every queued
 * delivery in the same instant, yet no retry comes sooner than half its step.
 */
export function retryDelayMs(attempt: number, p: RetryPolicy, random: () => number = Math.random): number {
  const step = Math.min(p.retryMaxDelayMs, p.retryBaseMs * 2 ** Math.min(attempt - 1, 40));
  return Math.round(step / 2 + random() * (step / 2));
}

/** The next attempt's time, or null when it would fall past the retry window counted from the delivery's creation. */
export function nextAttemptAt(createdAt: Date, now: Date, attempt: number, p: RetryPolicy, random?: () => number): Date | null {
  const at = new Date(now.getTime() + retryDelayMs(attempt, p, random));
  return at.getTime() - createdAt.getTime() > p.retryWindowMs ? null : at;
}

export interface DisablePolicy {
  disableAfterFailures: number;
  disableAfterMs: number;
}

/** Sustained failure: at least N attempts failed in a row, the first of them at least `disableAfterMs` ago. */
export function shouldDisable(consecutiveFailures: number, failingSince: Date, now: Date, p: DisablePolicy): boolean {
  return consecutiveFailures >= p.disableAfterFailures && now.getTime() - failingSince.getTime() >= p.disableAfterMs;
}
