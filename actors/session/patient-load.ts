/**
 * Retries a read through a short outage of its store: the secret check of a tool result (act
 * step) must not turn a succeeded call into a failed one because PostgreSQL was unreachable for
 * a few seconds (chaos defect 3, issue 13). Only errors `isTransient` accepts are retried, so a
 * real bug still fails at once; the last error is thrown when `waitMs` runs out or `signal` fires.
 */
import { setTimeout as sleep } from 'node:timers/promises';

export interface PatientLoadOptions {
  /** How long to keep retrying from the first failure, in ms. */
  waitMs: number;
  isTransient(err: unknown): boolean;
  signal?: AbortSignal;
  /** Pause before the first retry; doubles up to `maxDelayMs`. */
  firstDelayMs?: number;
  maxDelayMs?: number;
}

const DEFAULT_FIRST_DELAY_MS = 100;
const DEFAULT_MAX_DELAY_MS = 2_000;

export async function loadPatiently<T>(load: () => Promise<T>, o: PatientLoadOptions): Promise<T> {
  const deadline = Date.now() + o.waitMs;
  let delay = o.firstDelayMs ?? DEFAULT_FIRST_DELAY_MS;
  for (;;) {
    try {
      return await load();
    } catch (err) {
      const left = deadline - Date.now();
      if (!o.isTransient(err) || left <= 0 || o.signal?.aborted) throw err;
      // An abort ends the pause early; the next failure then throws (the check above).
      await sleep(Math.min(delay, left), undefined, { signal: o.signal }).catch(() => {});
      delay = Math.min(delay * 2, o.maxDelayMs ?? DEFAULT_MAX_DELAY_MS);
    }
  }
}
