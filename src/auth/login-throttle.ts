import { LRUCache } from 'lru-cache';
import { TooManyRequestsError } from '../errors.js';

export interface LoginThrottleOptions {
  /** Attempts per email within the window (default 5). */
  maxPerEmail: number;
  /** Attempts per client IP within the window (default 30). */
  maxPerIp: number;
  /** Failed refresh-token exchanges per client IP within the window (default 30). */
  maxRefreshPerIp: number;
  /** Sliding window length in ms (default 15 minutes). */
  windowMs: number;
  /** Upper bound on tracked keys; the least recently used are dropped (default 100 000). */
  maxKeys: number;
  now: () => number;
}

export function defaultLoginThrottleOptions(): LoginThrottleOptions {
  return { maxPerEmail: 5, maxPerIp: 30, maxRefreshPerIp: 30, windowMs: 15 * 60_000, maxKeys: 100_000, now: Date.now };
}

/** An attempt that was let through; it counts until it is given back. */
export interface ThrottledAttempt {
  /** It worked: the caller's slate is clean (a login clears its email's window) and this attempt is given back. */
  succeeded(): void;
  /** It never got to check a credential (the password hasher was full): this attempt is given back. */
  release(): void;
}

/**
 * Brute-force throttling of logins, per email and per client IP, and of refresh-token exchanges,
 * per client IP, with in-memory sliding windows (per instance: N instances behind a balancer
 * allow up to N times the limits). Every attempt counts when it starts, so parallel guesses
 * cannot slip through; a successful one gives its attempt back, so only failures add up.
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

  function giveBack(key: string, now: number): void {
    const stamps = windows.get(key);
    const i = stamps?.lastIndexOf(now) ?? -1;
    if (i >= 0) stamps!.splice(i, 1);
  }

  /** Counts an attempt under every key; throws TooManyRequestsError (with Retry-After) when a window is full. */
  function count(keys: string[], limits: number[], clearOnSuccess: string[]): ThrottledAttempt {
    const now = o.now();
    let wait = 0;
    keys.forEach((k, i) => {
      const stamps = live(k, now);
      if (stamps.length >= limits[i]!) wait = Math.max(wait, retryAfterS(stamps, now));
    });
    if (wait) throw new TooManyRequestsError(wait);
    for (const k of keys) record(k, now);
    return {
      succeeded() {
        for (const k of keys) {
          if (clearOnSuccess.includes(k)) windows.delete(k);
          else giveBack(k, now);
        }
      },
      release() {
        for (const k of keys) giveBack(k, now);
      },
    };
  }

  /** A login: per email (cleared by a success) and per client IP. */
  function attempt(email: string, ip: string): ThrottledAttempt {
    const emailKey = `e:${email.toLowerCase()}`;
    return count([emailKey, `i:${ip}`], [o.maxPerEmail, o.maxPerIp], [emailKey]);
  }

  /**
   * A refresh-token exchange, per client IP. Tokens are random, so a guess names no user or
   * family to count against; the source is what a flood of made-up tokens has in common.
   */
  function attemptRefresh(ip: string): ThrottledAttempt {
    return count([`r:${ip}`], [o.maxRefreshPerIp], []);
  }

  return { attempt, attemptRefresh, size: () => windows.size };
}

export type LoginThrottle = ReturnType<typeof createLoginThrottle>;
