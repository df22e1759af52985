/**
 * The stored part of a turn's log view: every event appended so far (the turn's own and other
 * writers'), folded in sequence order, and the ids folded since the view was opened (a retried
 * append may have stored some of its events already).
 */
import type { SessionEvent } from '../../../schemas/events.js';
import type { EventLog } from '../../../src/bus/index.js';
import { evolveTurn } from '../../../src/turns/index.js';
import { fold, type FoldedSession } from './folded-session.js';

const READ_PAGE = 1000;

/** Events of a start's preamble before its `turn.started` (input.message, session.started). */
const PREAMBLE_BEFORE_STARTED = 2;

export class StoredView {
  readonly #events: EventLog<SessionEvent>;
  readonly #sessionId: string;
  #folded: FoldedSession;
  readonly #ids = new Set<string>();
  readonly #onRead: ((count: number) => void) | undefined;

  constructor(events: EventLog<SessionEvent>, sessionId: string, folded: FoldedSession, onRead?: (count: number) => void) {
    this.#events = events;
    this.#sessionId = sessionId;
    this.#folded = folded;
    this.#onRead = onRead;
  }

  async #read(afterSequence: number, limit: number): Promise<SessionEvent[]> {
    const page = await this.#events.read(this.#sessionId, { afterSequence, limit });
    this.#onRead?.(page.length);
    return page;
  }

  get folded(): FoldedSession {
    return this.#folded;
  }

  get ids(): ReadonlySet<string> {
    return this.#ids;
  }

  has(id: string): boolean {
    return this.#ids.has(id);
  }

  /** Reads and folds what the log holds after the fold, up to `upTo`; true when anything was new. */
  async readNew(upTo = Number.MAX_SAFE_INTEGER): Promise<boolean> {
    let read = false;
    for (;;) {
      const limit = Math.min(READ_PAGE, upTo - this.#folded.transcript.sequence);
      if (limit <= 0) break;
      const page = await this.#read(this.#folded.transcript.sequence, limit);
      if (page.length) {
        this.#folded = fold(this.#folded, page, this.#ids);
        read = true;
      }
      if (page.length < limit) break;
    }
    return read;
  }

  /**
   * Folds the turn's stored events from its preamble (`turn.started` at `startedAt`) up to the
   * fold's sequence into the turn state only: the turn began before the starting point (a
   * redelivery, a resume after a snapshot), whose transcript holds those events already. Reads
   * the turn's events, not the session's.
   */
  async replayTurn(startedAt: number): Promise<void> {
    const after = Math.max(0, startedAt - PREAMBLE_BEFORE_STARTED - 1);
    const upTo = this.#folded.transcript.sequence;
    let turn = this.#folded.turn;
    for (let cursor = after; cursor < upTo; ) {
      const page = await this.#read(cursor, Math.min(READ_PAGE, upTo - cursor));
      if (!page.length) break;
      for (const e of page.filter((p) => p.sequence <= upTo)) {
        turn = evolveTurn(turn, e);
        this.#ids.add(e.id);
      }
      cursor = page.at(-1)!.sequence;
    }
    this.#folded = { ...this.#folded, turn };
  }

  /**
   * Folds appended events; a sequence gap (another writer interleaved) is read from the log
   * first. True when another writer's events were folded too.
   */
  async absorb(events: readonly SessionEvent[]): Promise<boolean> {
    const fresh = events.filter((e) => e.sequence > this.#folded.transcript.sequence).sort((a, b) => a.sequence - b.sequence);
    let foreign = false;
    // Contiguous runs are folded at once (one copy of the transcript per run, not per event).
    let run: SessionEvent[] = [];
    const flushRun = () => {
      if (run.length) this.#folded = fold(this.#folded, run, this.#ids);
      run = [];
    };
    for (const e of fresh) {
      const last = run.at(-1)?.sequence ?? this.#folded.transcript.sequence;
      if (e.sequence <= last) continue;
      if (e.sequence > last + 1) {
        flushRun();
        await this.readNew(e.sequence - 1);
        foreign = true;
        if (e.sequence <= this.#folded.transcript.sequence) continue;
      }
      run.push(e);
    }
    flushRun();
    return foreign;
  }
}
