import { retrier, type RetryOptions, type RetryPolicy } from './retry.js';

/**
 * Asks `done` until it says true, pausing as `policy` says between asks: true once it did,
 * false when the policy gives up (its deadline or attempts). For waits on something another
 * process is about to write, where "not yet" is an answer, not a failure.
 */
export async function waitUntil(done: () => Promise<boolean>, policy: RetryPolicy, opts: RetryOptions = {}): Promise<boolean> {
  const loop = retrier(policy, opts);
  for (;;) {
    if (await done()) return true;
    if (!(await loop.failed(undefined))) return false;
  }
}
