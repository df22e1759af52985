import { RecencyMap } from './recency-map.js';

/**
 * Small per-session lists ordered by per-session sequence, for the buses' in-memory hints:
 * at most `perSession` items per session (the newest kept), at most `maxSessions` sessions (the
 * one least recently written to is dropped), and a session not written to for `idleMs` is
 * dropped (recency-map.ts). Reads do not count as use.
 */
export class SessionLists<T> {
  readonly #lists: RecencyMap<string, T[]>;

  constructor(
    readonly maxSessions: number,
    readonly perSession: number,
    readonly sequenceOf: (item: T) => number,
    idleMs: number,
    now?: () => number,
  ) {
    this.#lists = new RecencyMap({ max: maxSessions, idleMs, now });
  }

  /** Inserts `item` in sequence order, replacing one with the same sequence. */
  put(sessionId: string, item: T): void {
    const list = this.#lists.get(sessionId) ?? [];
    this.#lists.set(sessionId, list);
    const sequence = this.sequenceOf(item);
    let i = list.length;
    while (i > 0 && this.sequenceOf(list[i - 1]!) > sequence) i--; // usually appends at the end
    if (i > 0 && this.sequenceOf(list[i - 1]!) === sequence) list[i - 1] = item;
    else list.splice(i, 0, item);
    if (list.length > this.perSession) list.shift();
  }

  get(sessionId: string): readonly T[] | undefined {
    return this.#lists.get(sessionId); // a peek: only writes count as use
  }

  forget(sessionId: string): void {
    this.#lists.delete(sessionId);
  }
}
