/**
 * A per-session memory that forgets what stopped being useful: at most `max` entries, and an
 * entry not written for `idleMs` is gone. Only writes count as use (`get` is a peek), so the
 * entries sit in the Map in write order and the expired ones are always at its front: a `set`
 * drops them from there, in time proportional to what it drops (no timer per entry, no scan),
 * at most once per `idleMs / 16` (a sweep allocates an iterator; these maps are written for
 * every event). Under a steady load of new sessions the map holds about rate × idleMs entries
 * and then stops growing; an entry past its idle time is never returned, even when no sweep
 * has dropped it yet. Why recency in time and not only a count:
 * docs/decisions/0079-per-session-caches-forget-idle.md.
 */
export interface RecencyMapOptions {
  /** Entries kept at most; the one written longest ago goes first. */
  max: number;
  /** An entry not written for this long is dropped, in ms. */
  idleMs: number;
  /** Monotonic clock in ms (default `performance.now`); tests pass their own. */
  now?: () => number;
}

interface Entry<V> {
  value: V;
  writtenAt: number;
}

export class RecencyMap<K, V> {
  readonly #entries = new Map<K, Entry<V>>();
  readonly #max: number;
  readonly #idleMs: number;
  readonly #now: () => number;
  readonly #sweepEveryMs: number;
  #sweptAt = Number.NEGATIVE_INFINITY;

  constructor({ max, idleMs, now = () => performance.now() }: RecencyMapOptions) {
    this.#max = max;
    this.#idleMs = idleMs;
    this.#now = now;
    this.#sweepEveryMs = idleMs / 16;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The value last written for `key`, unless it has been idle too long. Not a use. */
  get(key: K): V | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (this.#now() - entry.writtenAt <= this.#idleMs) return entry.value;
    this.#entries.delete(key);
    return undefined;
  }

  /** Writes `value` as the newest entry, then drops the excess and (now and then) the expired from the oldest end. */
  set(key: K, value: V): void {
    const now = this.#now();
    const entry = this.#entries.get(key);
    if (entry) {
      this.#entries.delete(key); // re-inserted below: the Map's order is write order
      entry.value = value;
      entry.writtenAt = now;
      this.#entries.set(key, entry);
    } else {
      this.#entries.set(key, { value, writtenAt: now });
    }
    if (this.#entries.size > this.#max) this.#entries.delete(this.#entries.keys().next().value!);
    if (now - this.#sweptAt >= this.#sweepEveryMs) this.#dropExpired(now);
  }

  #dropExpired(now: number): void {
    this.#sweptAt = now;
    const oldest = now - this.#idleMs;
    for (const [k, e] of this.#entries) {
      if (e.writtenAt >= oldest) break;
      this.#entries.delete(k);
    }
  }

  delete(key: K): void {
    this.#entries.delete(key);
  }
}
