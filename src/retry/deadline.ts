/** The error a promise's deadline rejects with (a probe's answer says "timeout" or the message). */
export class DeadlineError extends Error {
  override name = 'DeadlineError';
}

/**
 * `p`, or a rejection with a DeadlineError once `ms` have passed first. `p` itself is not
 * cancelled (a probe's request runs out on its own); the timer is cleared either way, so a
 * settled probe leaves nothing pending.
 */
export function withDeadline<T>(p: Promise<T>, ms: number, message = 'timeout'): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineError(message)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}
