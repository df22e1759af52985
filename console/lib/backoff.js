// Reconnect delays for a stream the service did not close on purpose: the first retry comes
// quickly (a token expired, one instance restarted), then each waits about twice as long up to
// a cap, spread by ±50% jitter so the tabs of a stopped service do not come back in step.

export const FIRST_RETRY_MS = 250;
export const MAX_BACKOFF_MS = 15_000;

/** The wait before retry number `attempt` (0-based); `random` in [0, 1). */
export function backoffDelay(attempt, random = Math.random()) {
  const base = Math.min(MAX_BACKOFF_MS, FIRST_RETRY_MS * 2 ** attempt);
  return Math.round(base * (0.5 + random));
}
