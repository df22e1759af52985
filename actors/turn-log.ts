/**
 * A running turn's view of its session log: the folded transcript and turn state, and the only
 * way the worker appends. Appends are group-committed (everything queued while one append is in
 * flight goes out in the next), fenced (the claim must still be current before each append),
 * and optimistic (`expectedSequence` = what we have folded): when another writer got in first
 * (the API's cancel, client results, or a second worker) we read and fold its events, then
 * retry the same events with the same ids, which the log deduplicates.
 */
import type { EventLog, NewEvent, SessionEvent, TurnClaim } from '../src/bus/ports.js';
import { createKeyedChain } from '../src/bus/keyed-chain.js';
import { evolveTurn, initialTurnState, type TurnState } from './turn-decider.js';
import { RetryableTurnError, TurnStoppedError } from './turn-errors.js';
import type { TurnRef } from './turn-events.js';
import { emptyTranscript, extendTranscript, type Transcript } from './transcript.js';

const READ_PAGE = 1000;
/** Conflicting appends retried this often before the attempt is given back to the queue. */
const MAX_APPEND_ATTEMPTS = 20;
const CONFLICT_RETRY_DELAY_MS = 1_000;

/** What a worker keeps between turns of a session to avoid re-reading the whole log. */
export interface FoldedSession {
  transcript: Transcript;
  turn: TurnState;
}

export interface TurnLogOptions {
  events: EventLog;
  claim: Pick<TurnClaim, 'isCurrent'>;
  sessionId: string;
  turn: TurnRef;
  /** Called (inside the log's lock) after new events were folded. */
  onFolded?: (state: TurnState, events: readonly SessionEvent[]) => void;
}

export class TurnLog {
  readonly #o: TurnLogOptions;
  readonly #lock = createKeyedChain();
  #transcript: Transcript;
  #state: TurnState;
  #pending: { events: NewEvent[]; resolve: () => void; reject: (err: unknown) => void }[] = [];
  #draining = false;

  private constructor(o: TurnLogOptions, folded: FoldedSession) {
    this.#o = o;
    this.#transcript = folded.transcript;
    this.#state = folded.turn;
  }

  /**
   * Opens the turn's view: from a cached fold when there is one (reading only what came after
   * it), else from the start of the log.
   */
  static async open(o: TurnLogOptions, cached?: FoldedSession): Promise<TurnLog> {
    const sameTurn = cached?.turn.turn.turn_id === o.turn.turn_id;
    const start: FoldedSession = cached
      ? { transcript: cached.transcript, turn: sameTurn ? cached.turn : initialTurnState(o.turn) }
      : { transcript: emptyTranscript(), turn: initialTurnState(o.turn) };
    let log = new TurnLog(o, start);
    await log.sync();
    if (cached && !sameTurn && !log.state.hasTurnStarted) {
      // `turn.started` carries the turn id as its event id: stored before the cached point?
      const started = await o.events.findById(o.sessionId, o.turn.turn_id);
      if (started && started.sequence <= cached.transcript.sequence) {
        log = new TurnLog(o, { transcript: emptyTranscript(), turn: initialTurnState(o.turn) });
        await log.sync();
      }
    }
    return log;
  }

  get state(): TurnState {
    return this.#state;
  }

  get transcript(): Transcript {
    return this.#transcript;
  }

  get sequence(): number {
    return this.#transcript.sequence;
  }

  folded(): FoldedSession {
    return { transcript: this.#transcript, turn: this.#state };
  }

  /** Appends events (after everything committed before); resolves once they are stored and folded. */
  commit(events: NewEvent[]): Promise<void> {
    if (events.length === 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.#pending.push({ events, resolve, reject });
      if (!this.#draining) void this.#drain();
    });
  }

  /** Reads and folds whatever other writers appended. */
  sync(): Promise<void> {
    return this.#lock.run('log', () => this.#readNew());
  }

  /** Like sync, but only reads when the log has grown (one cheap tail lookup). */
  async syncIfBehind(): Promise<void> {
    if ((await this.#o.events.lastSequence(this.#o.sessionId)) > this.sequence) await this.sync();
  }

  async #drain(): Promise<void> {
    this.#draining = true;
    try {
      while (this.#pending.length) {
        const batch = this.#pending.splice(0);
        try {
          await this.#lock.run('log', () => this.#append(batch.flatMap((b) => b.events)));
          for (const b of batch) b.resolve();
        } catch (err) {
          for (const b of batch) b.reject(err);
        }
      }
    } finally {
      this.#draining = false;
    }
  }

  async #append(events: NewEvent[]): Promise<void> {
    for (let attempt = 1; attempt <= MAX_APPEND_ATTEMPTS; attempt++) {
      if (!(await this.#o.claim.isCurrent())) throw new TurnStoppedError('stale_claim');
      const result = await this.#o.events.append(this.#o.sessionId, events, { expectedSequence: this.sequence });
      if (result.ok) return this.#absorb(result.events);
      await this.#readNew();
    }
    throw new RetryableTurnError('event log kept conflicting', CONFLICT_RETRY_DELAY_MS);
  }

  /** Folds appended events; a sequence gap (another writer interleaved) is read from the log first. */
  async #absorb(events: readonly SessionEvent[]): Promise<void> {
    const fresh = events.filter((e) => e.sequence > this.sequence).sort((a, b) => a.sequence - b.sequence);
    for (const e of fresh) {
      if (e.sequence <= this.sequence) continue;
      if (e.sequence > this.sequence + 1) await this.#readNew(e.sequence - 1);
      this.#fold([e]);
    }
  }

  async #readNew(upTo = Number.MAX_SAFE_INTEGER): Promise<void> {
    for (;;) {
      const limit = Math.min(READ_PAGE, upTo - this.sequence);
      if (limit <= 0) return;
      const page = await this.#o.events.read(this.#o.sessionId, { afterSequence: this.sequence, limit });
      if (page.length) this.#fold(page);
      if (page.length < limit) return;
    }
  }

  #fold(events: readonly SessionEvent[]): void {
    const fresh = events.filter((e) => e.sequence > this.sequence);
    if (!fresh.length) return;
    this.#transcript = extendTranscript(this.#transcript, fresh);
    let s = this.#state;
    for (const e of fresh) s = evolveTurn(s, e);
    this.#state = s;
    this.#o.onFolded?.(s, fresh);
  }
}
