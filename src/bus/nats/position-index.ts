import { SessionLists } from '../session-lists.js';

/** Where a session event sits in its stream: per-session sequence and stream sequence. */
export interface StreamPosition {
  sequence: number;
  streamSeq: number;
}

/** Where a session's stream ends as far as this process knows: its last event's position and id. */
export interface StreamTail {
  sequence: number;
  streamSeq: number;
  id: string | undefined;
}

export const DEFAULT_INDEXED_SESSIONS = 10_000;
export const DEFAULT_POSITIONS_PER_SESSION = 64;
/**
 * A session not written to (appended, read, or seen live) for this long loses its hints, in ms:
 * they serve the reads of a running turn and its streams (seconds apart); a session idle for
 * half a minute is between conversations, and its next read costs a binary search.
 */
export const DEFAULT_POSITIONS_IDLE_MS = 30_000;

/**
 * Recently seen (sequence → stream sequence) pairs per session, from appends, reads and live
 * messages. A read "after sequence n" needs the stream sequence where n+1 lives; with a hint
 * for n it starts right there, otherwise the hints bound a binary search. Hints may be stale
 * after a purge; readers still check every sequence they get, so a bad hint costs a wasted
 * read, never a wrong result. Least recently used sessions are dropped, and idle ones.
 */
export class PositionIndex {
  readonly #lists: SessionLists<StreamPosition>;

  constructor(
    maxSessions = DEFAULT_INDEXED_SESSIONS,
    perSession = DEFAULT_POSITIONS_PER_SESSION,
    idleMs = DEFAULT_POSITIONS_IDLE_MS,
    now?: () => number,
  ) {
    this.#lists = new SessionLists(maxSessions, perSession, (pos) => pos.sequence, idleMs, now);
  }

  record(sessionId: string, pos: StreamPosition): void {
    if (pos.sequence <= 0 || pos.streamSeq <= 0) return;
    this.#lists.put(sessionId, pos);
  }

  /** The closest known positions at or below `sequence` and above it. */
  bounds(sessionId: string, sequence: number): { below?: StreamPosition; above?: StreamPosition } {
    const list = this.#lists.get(sessionId);
    if (!list) return {};
    let below: StreamPosition | undefined;
    for (const pos of list) {
      if (pos.sequence > sequence) return { below, above: pos };
      below = pos;
    }
    return { below };
  }

  forget(sessionId: string): void {
    this.#lists.forget(sessionId);
  }
}
