/**
 * A running turn's view of its session log and the only way its worker appends. `push` queues
 * events and returns at once; whatever queues while an append is in flight goes out in the next
 * (group commit); `commit`/`flush` wait where durability matters. `state`/`transcript` include
 * queued events, folded over what is stored (StoredView). Every append is fenced (the claim is
 * checked first), but one of only the start job's own events (`stamped`: ids fixed when the turn
 * was accepted, no decision of this attempt's, stored once whoever writes them), and optimistic (`expectedSequence`; after a conflict, other writers' events are
 * folded and the same ids sent again). An append with an unknown outcome is retried after a pause
 * with what the log lacks of it; a failure beyond that is sticky. Tool results in hand are still
 * appended after the claim was lost if their call has no result yet (append-outcomes.ts); a writer
 * that finds another's result for a call it was completing gives the job back to decide again.
 */
import type { NewSessionEvent, SessionEvent } from '../../../schemas/events.js';
import { type AppendResult, createKeyedChain, UnstorableEventError } from '../../../src/bus/index.js';
import { storableJson } from '../../../src/storable-text.js';
import { RetryableTurnError, StaleDecisionError, TurnStoppedError, type TurnState } from '../../../src/turns/index.js';
import type { Transcript } from './transcript.js';
import { retrier, retryPolicies, type Retrier } from '../../../src/retry/index.js';
import * as outcomes from './append-outcomes.js';
import type { OutagePause } from './append-outcomes.js';
import { fold, provisional, startingFold, type FoldedSession, type StartingPoint } from './folded-session.js';
import { AppendWaits } from './append-waits.js';
import { StoredView } from './stored-view.js';
import type { TurnLogOptions } from './turn-log-options.js';

export type { FoldedSession, StartingPoint, TurnLogOptions };

export class TurnLog {
  readonly #o: TurnLogOptions;
  readonly #lock = createKeyedChain();
  /** What is stored (ours and other writers' events), folded. */
  readonly #stored: StoredView;
  #view: FoldedSession;
  #queue: NewSessionEvent[] = [];
  /** Ids of queued events an earlier attempt may have stored already. */
  readonly #mayBeStored = new Set<string>();
  #pushed = 0;
  #storedCount = 0;
  #waiters: { upTo: number; resolve: () => void; reject: (err: unknown) => void }[] = [];
  #draining = false;
  #failure: unknown = null;
  /** Ids of queued tool results in hand, handed over when the claim is lost (see the class comment). */
  readonly #results = new Set<string>();
  /** Ids of the start job's own events (`stamped`): a batch of only these needs no claim check. */
  readonly #jobEvents = new Set<string>();

  private constructor(o: TurnLogOptions, folded: FoldedSession) {
    this.#o = o;
    this.#stored = new StoredView(o.events, o.sessionId, folded, o.onRead);
    this.#view = folded;
  }

  /** Opens the turn's view: from a cached fold or a stored snapshot (reading what came after it), else from the log's start. */
  static async open(o: TurnLogOptions, cached?: StartingPoint): Promise<TurnLog> {
    const sameTurn = cached?.turn?.turn.turn_id === o.turn.turn_id;
    let log = new TurnLog(o, startingFold(o.turn, cached));
    await log.sync();
    if (cached && !sameTurn && !log.state.hasTurnStarted && o.mayPredateCache) {
      // `turn.started` carries the turn id as its event id: stored before the starting point? Then its turn's events are replayed.
      const started = await o.events.findById(o.sessionId, o.turn.turn_id);
      if (started && started.sequence <= cached.transcript.sequence) {
        log = new TurnLog(o, startingFold(o.turn, { transcript: cached.transcript }));
        await log.#stored.replayTurn(started.sequence);
        log.#reproject();
        await log.sync();
      }
    }
    return log;
  }

  /** The turn state including queued events. */
  get state(): TurnState {
    return this.#view.turn;
  }

  /** The transcript including queued events. */
  get transcript(): Transcript {
    return this.#view.transcript;
  }

  /** True when an event with this id was stored and folded since this view was opened. */
  hasStored(id: string): boolean {
    return this.#stored.has(id);
  }

  /** The sticky append failure, if appends have failed (the attempt must end). */
  get failure(): unknown {
    return this.#failure;
  }

  /**
   * After the log refused a batch for its content (UnstorableEventError), or found it decided on a
   * view the log has moved past (StaleDecisionError): forgets what was queued (none of it was
   * stored) and clears the failure, so the attempt can record `turn.failed` or decide again.
   * False for any other failure, which stays sticky.
   */
  dropUnappended(): boolean {
    if (!(this.#failure instanceof UnstorableEventError || this.#failure instanceof StaleDecisionError)) return false;
    for (const e of this.#queue) {
      this.#mayBeStored.delete(e.id!);
      this.#results.delete(e.id!);
    }
    this.#queue = [];
    this.#storedCount = this.#pushed;
    this.#failure = null;
    this.#reproject();
    return true;
  }

  /** The durable view (what is stored), for the cache. */
  folded(): FoldedSession {
    return this.#stored.folded;
  }

  /**
   * Queues events to append after everything queued before; throws a sticky append failure.
   * `stamped`: the start job's own (ids and trace fixed when the turn was accepted).
   * `mayBeStored`: an earlier attempt may have stored them (see the class comment).
   * `result`: a tool's `tool.completed` in hand, handed over if the claim is lost before it is stored.
   */
  push(pushed: NewSessionEvent[], { result = false, stamped = false, mayBeStored = false } = {}): void {
    if (this.#failure) throw this.#failure;
    if (pushed.length === 0) return;
    // A NUL or a lone surrogate in model output would make the store refuse the batch: repaired
    // here, before anything folds them (tools run on the repaired arguments they are stored with).
    const events = pushed.map(storableJson);
    if (result) for (const e of events) this.#results.add(e.id!);
    if (mayBeStored) for (const e of events) this.#mayBeStored.add(e.id!);
    if (stamped) for (const e of events) this.#jobEvents.add(e.id!);
    else this.#o.stamp?.(events);
    this.#queue.push(...events);
    this.#pushed += events.length;
    this.#view = fold(this.#view, provisional(this.#o.sessionId, events, this.#view.transcript.sequence));
    if (!this.#draining) void this.#drain();
  }

  /** Queues events and resolves once they are stored; `result`: a tool's result in hand (see push). */
  commit(events: NewSessionEvent[], { result = false } = {}): Promise<void> {
    try {
      this.push(events, { result });
    } catch (err) {
      return Promise.reject(err);
    }
    return this.flush();
  }

  /** Resolves once everything queued so far is stored. */
  flush(): Promise<void> {
    if (this.#failure) return Promise.reject(this.#failure);
    if (this.#storedCount >= this.#pushed) return Promise.resolve();
    return new Promise((resolve, reject) => this.#waiters.push({ upTo: this.#pushed, resolve, reject }));
  }

  /** Reads and folds whatever other writers appended. */
  sync(): Promise<void> {
    return this.#lock.run('log', () => this.#readNew());
  }

  async #readNew(upTo?: number): Promise<void> {
    if (await this.#stored.readNew(upTo)) this.#reproject();
  }

  async #absorb(events: readonly SessionEvent[]): Promise<void> {
    if (await this.#stored.absorb(events)) this.#reproject();
  }

  /** Like sync, but not while our own appends are queued or in flight (the log is ahead only by them). */
  async syncIfBehind(): Promise<void> {
    if (this.#queue.length === 0 && !this.#draining) await this.sync();
  }

  async #drain(): Promise<void> {
    this.#draining = true;
    // The first append's fence check goes out with the burst's first event (its answer is back
    // about when the burst is complete); it is still awaited before anything is appended.
    let fence: Promise<boolean> | undefined = this.#fenced(this.#queue) ? this.#o.claim.isCurrent() : undefined;
    fence?.catch(() => undefined);
    try {
      // Let the current burst queue up first (a step pushes many events in one macrotask): one append.
      await new Promise((resolve) => setImmediate(resolve));
      while (this.#queue.length && !this.#failure) {
        try {
          const checked = fence;
          fence = undefined;
          await this.#lock.run('log', async () => {
            const batch = this.#queue.slice();
            await this.#append(batch, checked);
            this.#queue.splice(0, batch.length);
            this.#storedCount += batch.length;
          });
        } catch (err) {
          this.#failure = err;
        }
        this.#settleWaiters();
      }
    } finally {
      this.#draining = false;
      this.#settleWaiters();
    }
  }

  /** Whether appending `events` needs the claim checked first (not for the start job's own events alone). */
  #fenced(events: readonly NewSessionEvent[]): boolean {
    return !events.every((e) => this.#jobEvents.has(e.id!));
  }

  #settleWaiters(): void {
    const waiting = this.#waiters;
    this.#waiters = [];
    for (const w of waiting) {
      if (this.#failure) w.reject(this.#failure);
      else if (this.#storedCount >= w.upTo) w.resolve();
      else this.#waiters.push(w);
    }
  }

  /**
   * Appends after checking the claim (`fence`: that check, started already, for the first
   * attempt). After an append with an unknown outcome, only the events the log lacks are sent
   * again, and without `newIds`: a late copy of one of them is then found, not stored twice.
   */
  async #append(events: NewSessionEvent[], fence?: Promise<boolean>): Promise<void> {
    const pending = events;
    const newIds = !events.some((e) => this.#mayBeStored.has(e.id!));
    // The policy's deadline counts from the first unknown outcome, not from the first try.
    let outage: Retrier | undefined;
    const policy = this.#o.appendRetry ?? retryPolicies.turnAppendOutcome;
    const pause: OutagePause = (err) => (outage ??= retrier(policy)).failed(err);
    const waits = new AppendWaits();
    try {
      await this.#appendWaiting(pending, newIds, pause, waits, fence);
    } finally {
      waits.report(this.#o.log, events.length);
    }
    for (const e of events) for (const set of [this.#mayBeStored, this.#results, this.#jobEvents]) set.delete(e.id!);
  }

  async #appendWaiting(pending: NewSessionEvent[], newIds: boolean, pause: OutagePause, waits: AppendWaits, fence?: Promise<boolean>) {
    while (pending.length) {
      let result: AppendResult<SessionEvent>;
      try {
        // A check that failed (the claims bucket electing a leader) says nothing about the
        // claim: it is retried like an append with an unknown outcome.
        const current = fence ?? (this.#fenced(pending) ? this.#o.claim.isCurrent() : Promise.resolve(true));
        fence = undefined;
        if (!(await waits.time('fence', current))) {
          await outcomes.handOverResults(
            {
              readNew: () => this.#readNew(),
              open: (e) => this.#results.has(e.id!) && outcomes.isOpenResult(e, this.#stored.folded.turn),
              append: (results) =>
                this.#o.events.append(this.#o.sessionId, results, { expectedSequence: this.#stored.folded.transcript.sequence }),
              absorb: (events) => this.#absorb(events),
            },
            pending,
            pause,
          );
          throw new TurnStoppedError('stale_claim');
        }
        const expectedSequence = this.#stored.folded.transcript.sequence;
        result = await waits.time('append', this.#o.events.append(this.#o.sessionId, pending, { expectedSequence, newIds }));
      } catch (err) {
        waits.unknownOutcomes++;
        if (err instanceof TurnStoppedError || !outcomes.isUnknownOutcome(err) || !(await waits.time('pause', pause(err)))) throw err;
        pending = await this.#unstoredNow(pending);
        newIds = false;
        this.#assertStillOurs(pending);
        continue;
      }
      if (result.ok) {
        await this.#absorb(result.events);
        break;
      }
      if (++waits.conflicts >= outcomes.MAX_APPEND_ATTEMPTS)
        throw new RetryableTurnError('event log kept conflicting', outcomes.CONFLICT_RETRY_DELAY_MS);
      await this.#readNew();
      if (outcomes.resultTaken(pending, this.#stored.folded.turn, this.#stored.ids)) {
        throw new RetryableTurnError('another attempt recorded a result this one was recording: decide again', outcomes.REDECIDE_DELAY_MS);
      }
      this.#assertStillOurs(pending);
      if (!newIds) pending = this.#unstored(pending);
    }
  }

  /**
   * Before `batch` goes out again after the log moved: none of its tool calls may have been
   * started by another attempt meanwhile. The claim check came before the other attempt's claim,
   * so only the log's order tells (chaos freeze-nats: a tool run by both deliveries).
   */
  #assertStillOurs(batch: readonly NewSessionEvent[]): void {
    if (outcomes.startTaken(batch, this.#stored.folded.turn, this.#stored.ids)) {
      throw new StaleDecisionError('another attempt started a tool call this one was starting');
    }
  }

  /** Reads what the log holds now (after a retry pause) and returns the events of `batch` it lacks. */
  async #unstoredNow(batch: NewSessionEvent[]): Promise<NewSessionEvent[]> {
    // A log that cannot be read yet is still down: the next append fails too and takes the next pause.
    await this.#readNew().catch(() => undefined);
    return this.#unstored(batch);
  }

  #unstored(batch: NewSessionEvent[]): NewSessionEvent[] {
    return batch.filter((e) => !this.#stored.has(e.id!));
  }

  /** The optimistic view = the durable view plus what is still queued (other writers' events come first). */
  #reproject(): void {
    const unstored = this.#queue.filter((e) => !this.#stored.has(e.id!));
    this.#view = fold(this.#stored.folded, provisional(this.#o.sessionId, unstored, this.#stored.folded.transcript.sequence));
    this.#o.onFolded?.(this.#view.turn);
  }
}
