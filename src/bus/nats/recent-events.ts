import type { LoggedEvent } from '../ports.js';
import type { StreamTail } from './position-index.js';
import { SessionLists } from '../session-lists.js';

/** An event this process stored, where it landed, and the session's message just before it. */
export interface KnownEvent {
  event: LoggedEvent;
  streamSeq: number;
  /** Stream sequence of the session's previous message (0: none); what the append expected. */
  prevStreamSeq: number;
}

/**
 * Bounds on memory (events hold whole messages and tool results). A read that needs more than
 * is kept goes to the server. A turn's preamble and the worker's largest append are both well
 * under 16 events.
 */
export const DEFAULT_RECENT_SESSIONS = 1_000;
export const DEFAULT_RECENT_PER_SESSION = 16;
/**
 * A session not appended to for this long loses its events, in ms. They serve the reads of the
 * turn that wrote them (the worker reading the API's preamble, streams reading the worker's
 * events), which follow within seconds; the next turn reads only what came after its cached
 * fold. A step that runs longer (a slow tool) reads from the server, as without the hint.
 */
export const DEFAULT_RECENT_IDLE_MS = 30_000;

/**
 * The last events this process appended, per session, linked the way the server stored them:
 * each one was stored only behind `prevStreamSeq` (the first of a round by its expected last
 * subject sequence, a chained one by its predecessor being the stream's last message). A read
 * that finds the tail among them can follow those links back instead of fetching each event:
 * on a single instance the worker's reads of the API's preamble (and the other way round) cost
 * the tail lookup only. The links make it exact: a tail that is not one of ours, or any link
 * that does not meet the event before it, sends the read to the server. Events are shared, not
 * copied: like everything a read returns, callers treat them as immutable.
 */
export class RecentEvents {
  readonly #lists: SessionLists<KnownEvent>;

  constructor(
    maxSessions = DEFAULT_RECENT_SESSIONS,
    perSession = DEFAULT_RECENT_PER_SESSION,
    idleMs = DEFAULT_RECENT_IDLE_MS,
    now?: () => number,
  ) {
    this.#lists = new SessionLists(maxSessions, perSession, (known) => known.event.sequence, idleMs, now);
  }

  remember(known: KnownEvent): void {
    this.#lists.put(known.event.session_id, known);
  }

  /**
   * The events after `after` (at most `limit`), when the session's stored tail is one of ours
   * and every event from there back to `after + 1` is known and linked to the one before it;
   * otherwise null (read them from the server).
   */
  after(sessionId: string, after: number, tail: StreamTail, limit: number): LoggedEvent[] | null {
    const list = this.#lists.get(sessionId);
    if (!list || tail.sequence <= after) return null;
    let i = list.length - 1;
    while (i >= 0 && list[i]!.event.sequence > tail.sequence) i--;
    if (i < 0 || list[i]!.streamSeq !== tail.streamSeq || list[i]!.event.sequence !== tail.sequence) return null;
    const run: LoggedEvent[] = [];
    for (let k = i; ; k--) {
      const cur = list[k]!;
      run.push(cur.event);
      if (cur.event.sequence === after + 1) break;
      const prev = list[k - 1];
      if (!prev || prev.event.sequence !== cur.event.sequence - 1 || prev.streamSeq !== cur.prevStreamSeq) return null;
    }
    run.reverse();
    return run.length > limit ? run.slice(0, limit) : run;
  }

  forget(sessionId: string): void {
    this.#lists.forget(sessionId);
  }
}
