import { hash } from 'node:crypto';
import type { Principal } from './principal.js';

/** A credential's check result: the caller, and the instant (ms since epoch) it stops being valid by itself. */
export interface Verified {
  principal: Principal;
  /** The key's `expires_at` or the token's `exp`; null when the credential has no end of its own. */
  validUntil: number | null;
}

export interface PrincipalCacheOptions {
  /** How long a check is reused (AUTH_CACHE_TTL_MS); 0 turns the cache off. */
  ttlMs: number;
  maxEntries: number;
  /**
   * True when other instances may share the database (PostgreSQL): their caches can only be
   * outwaited, so `invalidate` resolves after `ttlMs`. PGlite is one process: clearing is enough.
   */
  shared: boolean;
  /** Monotonic clock for the reuse window (wall-clock steps must not stretch it). */
  monotonicNow?: () => number;
}

/**
 * Credential checks reused for a short time, keyed by the credential's SHA-256 (the plain value
 * is never kept). Revocation stays immediate where it matters: every write that ends or narrows
 * a credential awaits `invalidate()` before answering, and by then no instance holds a check
 * made before that write (an entry's life counts from before its database read began).
 */
export function createPrincipalCache({ ttlMs, maxEntries, shared, monotonicNow = () => performance.now() }: PrincipalCacheOptions) {
  const entries = new Map<string, { principal: Principal; staleAt: number; validUntil: number }>();
  const inFlight = new Map<string, Promise<Verified | null | undefined>>();

  function keyOf(credential: string): string {
    return hash('sha256', credential, 'base64'); // one-shot: a createHash object costs more than the digest
  }

  /** A live cached check, or undefined. */
  function get(key: string): Principal | undefined {
    const e = entries.get(key);
    if (!e) return undefined;
    if (e.staleAt > monotonicNow() && e.validUntil > Date.now()) return e.principal;
    entries.delete(key);
    return undefined;
  }

  /** The monotonic instant to pass to `set` once the check's database read has finished. */
  function readStarts(): number {
    return monotonicNow();
  }

  /** Caches a positive check whose database read began at `readStartedAt`. Failures are never cached. */
  function set(key: string, { principal, validUntil }: Verified, readStartedAt: number): void {
    const staleAt = readStartedAt + ttlMs;
    if (ttlMs === 0 || staleAt <= monotonicNow()) return;
    if (entries.size >= maxEntries) entries.delete(entries.keys().next().value!); // oldest first
    entries.set(key, { principal, staleAt, validUntil: validUntil ?? Infinity });
  }

  /**
   * The check of `key` by `verify`, cached. Requests that miss while a check of the same
   * credential is in flight share it: when the reuse window ends, a client's concurrent requests
   * (50 at once in bench/real-path) make one database read, not one each. A shared check is
   * one the cache would have answered anyway (its life counts from its own start), and checks
   * in flight are forgotten by `invalidate` as entries are.
   */
  async function verifyOnce(key: string, verify: () => Promise<Verified | null | undefined>): Promise<Verified | null | undefined> {
    const running = inFlight.get(key);
    if (running) return running;
    const readStartedAt = readStarts();
    const check = verify().then((verified) => {
      if (verified) set(key, verified, readStartedAt);
      return verified;
    });
    inFlight.set(key, check);
    try {
      return await check;
    } finally {
      if (inFlight.get(key) === check) inFlight.delete(key);
    }
  }

  /** Call after committing a revocation, a role change or a user deletion, before answering. */
  async function invalidate(): Promise<void> {
    entries.clear();
    inFlight.clear();
    if (shared && ttlMs > 0) await new Promise((r) => setTimeout(r, ttlMs));
  }

  return { keyOf, get, readStarts, set, verifyOnce, invalidate, size: () => entries.size };
}

export type PrincipalCache = ReturnType<typeof createPrincipalCache>;
