import { LRUCache } from 'lru-cache';
import { TooManyRequestsError } from '../errors.js';

export interface LoginThrottleOptions {
  /** Attempts per email within the window (default 5). */
  maxPerEmail: number;
  /** Attempts per client IP within the window (default 30). */
  maxPerIp: number;
  /** Sliding window length in ms (default 15 minutes). */
  windowMs: number;
  /** Upper bound on tracked keys; the least recently used are dropped (default 100 000). */
  maxKeys: number;
  now: () => number;
}

export function defaultLoginThrottleOptions(): LoginThrottleOptions {
  return { maxPerEmail: 5, maxPerIp: 30, windowMs: 15 * 60_000, maxKeys: 100_000, now: Date.now };
}

/**
 * Brute-force throttling of logins, per email and per client IP, with in-memory sliding windows
 * (per instance: N instances behind a balancer allow up to N times the limits). Every attempt
 * counts when it starts, so parallel guesses cannot slip through; a successful login gives its
 * attempts back.
 */
export function createLoginThrottle(opts: Partial<LoginThrottleOptions> = {}) {
  const o = { ...defaultLoginThrottleOptions(), ...opts };
  const windows = new LRUCache<string, number[]>({ max: o.maxKeys });

  function live(key: string, now: number): number[] {
    const stamps = (windows.get(key) ?? []).filter((t) => now - t < o.windowMs);
    if (stamps.length) windows.set(key, stamps);
    else windows.delete(key);
    return stamps;
  }

  function retryAfterS(stamps: number[], now: number): number {
    return Math.max(1, Math.ceil((stamps[0]! + o.windowMs - now) / 1000));
  }

  function record(key: string, now: number): void {
    const stamps = windows.get(key) ?? [];
    stamps.push(now);
    windows.set(key, stamps);
  }

  /** Counts an attempt; throws TooManyRequestsError (with Retry-After) when a window is full. */
  function attempt(email: string, ip: string): { succeeded(): void } {
    const now = o.now();
    const keys = [`e:${email.toLowerCase()}`, `i:${ip}`];
    const limits = [o.maxPerEmail, o.maxPerIp];
    let wait = 0;
    keys.forEach((k, i) => {
      const stamps = live(k, now);
      if (stamps.length >= limits[i]!) wait = Math.max(wait, retryAfterS(stamps, now));
    });
    if (wait) throw new TooManyRequestsError(wait);
    for (const k of keys) record(k, now);
    return {
      succeeded() {
        windows.delete(keys[0]!);
        const ipStamps = windows.get(keys[1]!);
        const i = ipStamps?.lastIndexOf(now) ?? -1;
        if (i >= 0) ipStamps!.splice(i, 1);
      },
    };
  }

  return { attempt, size: () => windows.size };
}

export type LoginThrottle = ReturnType<typeof createLoginThrottle>;
