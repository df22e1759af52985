import { TooManyRequestsError } from '../errors.js';

export interface PasswordHashQueueOptions {
  /** scrypt runs at once on this instance (config PASSWORD_HASH_CONCURRENCY). */
  concurrency: number;
  /** Hashes waiting for a slot before more are refused with 429 (config PASSWORD_HASH_QUEUE_MAX). */
  queueMax: number;
}

/** What a refused hash tells the client to wait: a slot frees within one hash (~0.1 s). */
const RETRY_AFTER_S = 1;

/**
 * A per-instance bound on password hashing (issue 30 item 7). Every scrypt costs ~90 ms of a
 * core and 32 MiB, and logins need no credential, so a burst from many addresses (each within
 * its login throttle) would otherwise hash on every libuv thread at once and starve the rest of
 * the instance. A few run, a short line waits, the rest get 429 with Retry-After at no cost.
 */
export function createPasswordHashQueue({ concurrency, queueMax }: PasswordHashQueueOptions) {
  let running = 0;
  const waiting: (() => void)[] = [];

  function release(): void {
    const next = waiting.shift();
    if (next) next();
    else running--;
  }

  /** Runs `fn` in a slot (the slot passes straight to the next waiter); throws TooManyRequestsError when the line is full. */
  async function run<T>(fn: () => Promise<T>): Promise<T> {
    if (running < concurrency) running++;
    else if (waiting.length < queueMax) await new Promise<void>((resolve) => waiting.push(resolve));
    else throw new TooManyRequestsError(RETRY_AFTER_S, 'Too many sign-ins in progress; retry shortly');
    try {
      return await fn();
    } finally {
      release();
    }
  }

  return { run, stats: () => ({ running, waiting: waiting.length }) };
}

export type PasswordHashQueue = ReturnType<typeof createPasswordHashQueue>;
