/**
 * How long to pause after a failed attempt: a pure function of the failure count, so every
 * retry loop in the service computes its pauses one way and a test can check them with a fixed
 * random source.
 */
export interface Backoff {
  /** The pause after the first failure (before jitter). */
  readonly firstMs: number;
  /** How the pause grows per failure: doubles, grows by `firstMs`, or stays. */
  readonly growth: 'exponential' | 'linear' | 'constant';
  /** Upper bound of the pause (before jitter). */
  readonly maxMs: number;
  /**
   * `full`: uniform in [0, d] (spreads competing writers best); `half`: uniform in [d/2, d];
   * `none`: exactly d (a start-up wait whose log line says how long).
   */
  readonly jitter: 'full' | 'half' | 'none';
  /**
   * Failures retried at once, without a pause, before the backoff starts (an optimistic append
   * whose conflict is usually gone on the next round).
   */
  readonly immediateRetries?: number;
}

/** The pause after failure number `failures` (1 for the first); `random` returns [0, 1). */
export function pauseMs(backoff: Backoff, failures: number, random: () => number = Math.random): number {
  if (failures <= (backoff.immediateRetries ?? 0)) return 0;
  const grown =
    backoff.growth === 'exponential'
      ? backoff.firstMs * 2 ** (failures - 1)
      : backoff.growth === 'linear'
        ? backoff.firstMs * failures
        : backoff.firstMs;
  const d = Math.min(backoff.maxMs, grown);
  switch (backoff.jitter) {
    case 'none':
      return d;
    case 'half':
      return Math.round(d * (0.5 + random() * 0.5));
    case 'full':
      return Math.round(d * random());
  }
}
