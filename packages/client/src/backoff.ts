/** Reconnect delays: exponential from `initialMs`, capped at `maxMs`, with jitter (half to full). */
export interface BackoffOptions {
  /** First delay after a failure, in ms (default 250). */
  initialMs: number;
  /** Largest delay, in ms (default 10 000). */
  maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { initialMs: 250, maxMs: 10_000 };

/** The delay before reconnect attempt `attempt` (0 = first), in ms. */
export function backoffDelay(attempt: number, { initialMs, maxMs }: BackoffOptions, random: () => number = Math.random): number {
  const base = Math.min(maxMs, initialMs * 2 ** Math.min(attempt, 30));
  return Math.round(base / 2 + (base / 2) * random());
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
