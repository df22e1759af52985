/** Where a session event sits in its stream: per-session sequence and stream sequence. */
export interface StreamPosition {
  sequence: number;
  streamSeq: number;
}

export const DEFAULT_INDEXED_SESSIONS = 10_000;
export const DEFAULT_POSITIONS_PER_SESSION = 64;

/**
 * Recently seen (sequence → stream sequence) pairs per session, from appends, reads and live
 * messages. A read "after sequence n" needs the stream sequence where n+1 lives; with a hint
 * for n it starts right there, otherwise the hints bound a binary search. Hints may be stale
 * after a purge; readers still check every sequence they get, so a bad hint costs a wasted
 * read, never a wrong result. Least recently used sessions are dropped.
 */
export class PositionIndex {
  readonly #sessions = new Map<string, StreamPosition[]>();
  readonly #maxSessions: number;
  readonly #perSession: number;

  constructor(maxSessions = DEFAULT_INDEXED_SESSIONS, perSession = DEFAULT_POSITIONS_PER_SESSION) {
    this.#maxSessions = maxSessions;
    this.#perSession = perSession;
  }

  record(sessionId: string, pos: StreamPosition): void {
    if (pos.sequence <= 0 || pos.streamSeq <= 0) return;
    const list = this.#touch(sessionId);
    let i = list.length;
    while (i > 0 && list[i - 1]!.sequence > pos.sequence) i--; // usually appends at the end
    if (i > 0 && list[i - 1]!.sequence === pos.sequence) list[i - 1] = pos;
    else list.splice(i, 0, pos);
    if (list.length > this.#perSession) list.shift(); // keep the newest positions
  }

  /** The closest known positions at or below `sequence` and above it. */
  bounds(sessionId: string, sequence: number): { below?: StreamPosition; above?: StreamPosition } {
    const list = this.#sessions.get(sessionId);
    if (!list) return {};
    let below: StreamPosition | undefined;
    for (const pos of list) {
      if (pos.sequence > sequence) return { below, above: pos };
      below = pos;
    }
    return { below };
  }

  forget(sessionId: string): void {
    this.#sessions.delete(sessionId);
  }

  #touch(sessionId: string): StreamPosition[] {
    const list = this.#sessions.get(sessionId) ?? [];
    this.#sessions.delete(sessionId);
    this.#sessions.set(sessionId, list);
    if (this.#sessions.size > this.#maxSessions) {
      this.#sessions.delete(this.#sessions.keys().next().value!);
    }
    return list;
  }
}
