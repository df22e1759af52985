/**
 * A running turn's view of its session log: the folded transcript and turn state, and the only
 * way the worker appends.
 *
 * - Group commit: `push` queues events and returns at once; everything queued while one append
 *   is in flight goes out in the next append. `commit`/`flush` wait until events are stored.
 *   The shell waits only where durability matters (before a tool runs, before the session
 *   changes status, before the job is acked), so a turn costs a handful of appends, not one
 *   per step.
 * - Optimistic view: `state`/`transcript` already include queued events, so the decider can go
 *   on while they are being stored. Stored events (ours and other writers') are folded into a
 *   separate durable view; the optimistic one is that plus whatever is still queued.
 * - Fenced: the claim must still be current before each append (the check of a burst's first
 *   append starts with its first event, the append waits for its answer).
 * - Optimistic concurrency: `expectedSequence` = what the durable view has folded. When another
 *   writer got in first (the API's cancel, client results, a second worker) its events are read
 *   and folded, and the same events (same ids, which the log deduplicates) are appended again.
 * - Events are appended with `newIds` (one round trip on NATS), except those an earlier attempt
 *   may have stored (`mayBeStored`: a redelivered start's first events), which the log then finds
 *   by id instead of storing twice.
 * - An append that failed with an unknown outcome (a timeout, a leader change mid-append: NATS
 *   may have stored any prefix of it) is retried after a pause: the log is read, and what it
 *   lacks of the batch goes out again under the same ids. So a step's closing events (a
 *   tool's result, the LLM call's record) survive a short outage within the attempt.
 * - A failed append (lost claim, a bus broken for longer) is sticky: every later push/commit throws it.
 * - Results in hand are handed over (issue 13): a tool's result committed with `{ result: true }`
 *   is still appended when the claim was lost meanwhile (a lease that ran out while a NATS leader
 *   election ate the heartbeats), if its call has no result yet and under optimistic concurrency,
 *   so the next attempt records it instead of "interrupted". A writer that then conflicts and
 *   finds a result stored for a call it was completing itself decided on a stale view: it does
 *   not re-append (two results), it gives the job back to decide again (RetryableTurnError).
 */
import type { NewSessionEvent } from '../../../schemas/events.js';
import type { AppendResult, EventLog, NewEvent, SessionEvent, TurnClaim } from '../../../src/bus/ports.js';
import { createKeyedChain } from '../../../src/bus/keyed-chain.js';
import { UnstorableEventError } from '../../../src/bus/unstorable-event.js';
import { catalogued } from '../../../src/bus/session-event.js';
import { AppError } from '../../../src/errors.js';
import { storableJson } from '../../../src/storable-text.js';
import { evolveTurn, initialTurnState, type TurnState } from '../../../src/turns/index.js';
import { RetryableTurnError, TurnStoppedError } from '../../../src/turns/index.js';
import type { TurnRef } from '../../../src/turns/index.js';
import { emptyTranscript, extendTranscript, type Transcript } from './transcript.js';
import { DEFAULT_APPEND_RETRY_DELAYS_MS, RetryPauses } from './append-retry-pauses.js';

export { DEFAULT_APPEND_RETRY_DELAYS_MS };

const READ_PAGE = 1000;
/** Conflicting appends retried this often before the attempt is given back to the queue. */
const MAX_APPEND_ATTEMPTS = 20;
const CONFLICT_RETRY_DELAY_MS = 1_000;
/** How soon a job whose attempt decided on a stale view (another writer's result) is offered again, in ms. */
const REDECIDE_DELAY_MS = 0;

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
  /** Called after events of other writers were folded, with the (optimistic) state. */
  onFolded?: (state: TurnState) => void;
  /**
   * The job may be older than the cached fold (a redelivery, a resume): then a missing
   * `turn.started` is looked up instead of assumed to be on its way. False for a first start,
   * whose attempt writes `turn.started` itself.
   */
  mayPredateCache?: boolean;
  /** Called with events as they are queued (not `stamped` ones): trace ids (turn-trace.ts). */
  stamp?: (events: readonly NewEvent[]) => void;
  /** Pauses before retrying an append that failed with an unknown outcome (default DEFAULT_APPEND_RETRY_DELAYS_MS). */
  appendRetryDelaysMs?: readonly number[];
}

function fold(f: FoldedSession, events: readonly SessionEvent[], seen?: Set<string>): FoldedSession {
  const fresh = catalogued(events.filter((e) => e.sequence > f.transcript.sequence));
  if (!fresh.length) return f;
  if (seen) for (const e of fresh) seen.add(e.id);
  let turn = f.turn;
  for (const e of fresh) turn = evolveTurn(turn, e);
  return { transcript: extendTranscript(f.transcript, fresh), turn };
}

export class TurnLog {
  readonly #o: TurnLogOptions;
  readonly #lock = createKeyedChain();
  #durable: FoldedSession;
  #view: FoldedSession;
  #queue: NewEvent[] = [];
  /** Ids of queued events an earlier attempt may have stored already. */
  readonly #mayBeStored = new Set<string>();
  #pushed = 0;
  #stored = 0;
  #waiters: { upTo: number; resolve: () => void; reject: (err: unknown) => void }[] = [];
  #draining = false;
  #failure: unknown = null;
  /** Ids folded into the durable view since this log was opened (a retried append may have stored some already). */
  readonly #storedIds = new Set<string>();
  /** Ids of queued tool results in hand, handed over when the claim is lost (see the class comment). */
  readonly #results = new Set<string>();

  private constructor(o: TurnLogOptions, folded: FoldedSession) {
    this.#o = o;
    this.#durable = folded;
    this.#view = folded;
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
    if (cached && !sameTurn && !log.state.hasTurnStarted && o.mayPredateCache) {
      // `turn.started` carries the turn id as its event id: stored before the cached point?
      const started = await o.events.findById(o.sessionId, o.turn.turn_id);
      if (started && started.sequence <= cached.transcript.sequence) {
        log = new TurnLog(o, { transcript: emptyTranscript(), turn: initialTurnState(o.turn) });
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
    return this.#storedIds.has(id);
  }

  /** The sticky append failure, if appends have failed (the attempt must end). */
  get failure(): unknown {
    return this.#failure;
  }

  /**
   * After the log refused a batch for its content (UnstorableEventError): forgets what was
   * queued and not stored (none of it was, past the refused batch) and clears the failure, so
   * the attempt can record `turn.failed` on what is stored. False for any other failure, which
   * stays sticky.
   */
  dropRefused(): boolean {
    if (!(this.#failure instanceof UnstorableEventError)) return false;
    for (const e of this.#queue) {
      this.#mayBeStored.delete(e.id!);
      this.#results.delete(e.id!);
    }
    this.#queue = [];
    this.#stored = this.#pushed;
    this.#failure = null;
    this.#reproject();
    return true;
  }

  /** The durable view (what is stored), for the cache. */
  folded(): FoldedSession {
    return this.#durable;
  }

  /**
   * Queues events to append after everything queued before; throws a sticky append failure.
   * `stamped`: they carry their trace ids already (the start job's, from the request).
   * `mayBeStored`: an earlier attempt may have stored them (see the class comment).
   */
  push(pushed: NewEvent[], { result = false, stamped = false, mayBeStored = false } = {}): void {
    if (this.#failure) throw this.#failure;
    if (pushed.length === 0) return;
    // The one way model output and tool results become events: a NUL or a lone surrogate in them
    // would make the store refuse the batch, so they are repaired here, before anything folds them
    // (the tools then run on the repaired arguments they are stored with).
    const events = pushed.map(storableJson);
    if (result) for (const e of events) this.#results.add(e.id!);
    if (mayBeStored) for (const e of events) this.#mayBeStored.add(e.id!);
    if (!stamped) this.#o.stamp?.(events);
    this.#queue.push(...events);
    this.#pushed += events.length;
    this.#view = fold(this.#view, this.#provisional(events, this.#view.transcript.sequence));
    if (!this.#draining) void this.#drain();
  }

  /**
   * Queues events and resolves once they (and everything before them) are stored. `result`: a
   * tool's `tool.completed` in hand, handed over if the claim is lost before it is stored.
   */
  commit(events: NewEvent[], { result = false } = {}): Promise<void> {
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
    if (this.#stored >= this.#pushed) return Promise.resolve();
    return new Promise((resolve, reject) => this.#waiters.push({ upTo: this.#pushed, resolve, reject }));
  }

  /** Reads and folds whatever other writers appended. */
  sync(): Promise<void> {
    return this.#lock.run('log', () => this.#readNew());
  }

  /**
   * Like sync, but not while our own appends are queued or in flight (the log is ahead of us
   * only because of them). A read that finds nothing new costs one tail lookup, so no separate
   * lookup comes first.
   */
  async syncIfBehind(): Promise<void> {
    if (this.#queue.length === 0 && !this.#draining) await this.sync();
  }

  /** Queued events as if stored after `after` (ids are ours; sequences are provisional). */
  #provisional(events: readonly NewEvent[], after: number): SessionEvent[] {
    const ts = new Date().toISOString();
    return events.map((e, i) => ({
      id: e.id!,
      type: e.type,
      ts,
      session_id: this.#o.sessionId,
      sequence: after + i + 1,
      context: e.context ?? {},
      data: e.data ?? {},
      ...(e.metadata ? { metadata: e.metadata } : {}),
    }));
  }

  async #drain(): Promise<void> {
    this.#draining = true;
    // The fence check of the first append goes out with the burst's first event: its answer
    // is back about when the burst is complete instead of one round trip after that. It is
    // still awaited before anything is appended.
    let fence: Promise<boolean> | undefined = this.#o.claim.isCurrent();
    fence.catch(() => undefined);
    try {
      // Let the current burst of work queue up first (a zero-latency step pushes many events
      // within one macrotask), so it goes out as one append.
      await new Promise((resolve) => setImmediate(resolve));
      while (this.#queue.length && !this.#failure) {
        try {
          const checked = fence;
          fence = undefined;
          await this.#lock.run('log', async () => {
            const batch = this.#queue.slice();
            await this.#append(batch, checked);
            this.#queue.splice(0, batch.length);
            this.#stored += batch.length;
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

  #settleWaiters(): void {
    const waiting = this.#waiters;
    this.#waiters = [];
    for (const w of waiting) {
      if (this.#failure) w.reject(this.#failure);
      else if (this.#stored >= w.upTo) w.resolve();
      else this.#waiters.push(w);
    }
  }

  /**
   * Appends after checking the claim (`fence`: that check, started already, for the first
   * attempt). After an append with an unknown outcome, only the events the log lacks are sent
   * again, and without `newIds`: a late copy of one of them is then found, not stored twice.
   */
  async #append(events: NewEvent[], fence?: Promise<boolean>): Promise<void> {
    let pending = events;
    let newIds = !events.some((e) => this.#mayBeStored.has(e.id!));
    const pauses = new RetryPauses(this.#o.appendRetryDelaysMs ?? DEFAULT_APPEND_RETRY_DELAYS_MS);
    let conflicts = 0;
    while (pending.length) {
      let result: AppendResult;
      try {
        // A check that failed (the claims bucket electing a leader) says nothing about the
        // claim: it is retried like an append with an unknown outcome.
        const current = fence ?? this.#o.claim.isCurrent();
        fence = undefined;
        if (!(await current)) {
          await this.#handOver(pending, pauses);
          throw new TurnStoppedError('stale_claim');
        }
        result = await this.#o.events.append(this.#o.sessionId, pending, {
          expectedSequence: this.#durable.transcript.sequence,
          newIds,
        });
      } catch (err) {
        if (err instanceof TurnStoppedError || !isUnknownOutcome(err) || !(await pauses.wait())) throw err;
        pending = await this.#unstoredNow(pending);
        newIds = false;
        continue;
      }
      if (result.ok) {
        await this.#absorb(result.events);
        break;
      }
      if (++conflicts >= MAX_APPEND_ATTEMPTS) throw new RetryableTurnError('event log kept conflicting', CONFLICT_RETRY_DELAY_MS);
      await this.#readNew();
      if (this.#resultTaken(pending)) {
        throw new RetryableTurnError('another attempt recorded a result this one was recording: decide again', REDECIDE_DELAY_MS);
      }
      if (!newIds) pending = this.#unstored(pending);
    }
    for (const e of events) {
      this.#mayBeStored.delete(e.id!);
      this.#results.delete(e.id!);
    }
  }

  /**
   * The claim is lost, but tool results in hand must not turn into "interrupted": appends those
   * of `batch` whose call is started and has no result yet, under optimistic concurrency (a
   * conflict reads the log and checks again), through the remaining outage pauses. Nothing else
   * of the batch is appended, and nothing at all once any result for the call is stored.
   */
  async #handOver(batch: readonly NewEvent[], pauses: RetryPauses): Promise<void> {
    for (let attempt = 1; attempt <= MAX_APPEND_ATTEMPTS; attempt++) {
      try {
        await this.#readNew();
        const results = batch.filter((e) => this.#results.has(e.id!) && this.#isOpenResult(e));
        if (!results.length) return;
        // Without newIds: a copy stored by an earlier try of ours is found, not stored twice.
        const r = await this.#o.events.append(this.#o.sessionId, results, { expectedSequence: this.#durable.transcript.sequence });
        if (r.ok) return void (await this.#absorb(r.events));
      } catch (err) {
        if (!isUnknownOutcome(err) || !(await pauses.wait())) return;
      }
    }
  }

  /** A `tool.completed` whose call has a stored `tool.started` and no stored result. */
  #isOpenResult(e: NewEvent): boolean {
    const callId = resultCallId(e);
    return callId !== null && this.#durable.turn.steps.some((step) => step.started.has(callId) && !step.completed.has(callId));
  }

  /** `batch` completes a tool call for which the log now holds a result that is not ours. */
  #resultTaken(batch: readonly NewEvent[]): boolean {
    return batch.some((e) => {
      const callId = resultCallId(e);
      return callId !== null && !this.#storedIds.has(e.id!) && this.#durable.turn.steps.some((step) => step.completed.has(callId));
    });
  }

  /** Reads what the log holds now (after a retry pause) and returns the events of `batch` it lacks. */
  async #unstoredNow(batch: NewEvent[]): Promise<NewEvent[]> {
    // A log that cannot be read yet is still down: the next append fails too and takes the next pause.
    await this.#readNew().catch(() => undefined);
    return this.#unstored(batch);
  }

  #unstored(batch: NewEvent[]): NewEvent[] {
    return batch.filter((e) => !this.#storedIds.has(e.id!));
  }

  /** Folds appended events; a sequence gap (another writer interleaved) is read from the log first. */
  async #absorb(events: readonly SessionEvent[]): Promise<void> {
    const fresh = events.filter((e) => e.sequence > this.#durable.transcript.sequence).sort((a, b) => a.sequence - b.sequence);
    let foreign = false;
    // Contiguous runs are folded at once (one copy of the transcript per run, not per event).
    let run: SessionEvent[] = [];
    const flushRun = () => {
      if (run.length) this.#durable = fold(this.#durable, run, this.#storedIds);
      run = [];
    };
    for (const e of fresh) {
      const last = run.at(-1)?.sequence ?? this.#durable.transcript.sequence;
      if (e.sequence <= last) continue;
      if (e.sequence > last + 1) {
        flushRun();
        await this.#readNew(e.sequence - 1);
        foreign = true;
        if (e.sequence <= this.#durable.transcript.sequence) continue;
      }
      run.push(e);
    }
    flushRun();
    if (foreign) this.#reproject();
  }

  async #readNew(upTo = Number.MAX_SAFE_INTEGER): Promise<void> {
    let read = false;
    for (;;) {
      const limit = Math.min(READ_PAGE, upTo - this.#durable.transcript.sequence);
      if (limit <= 0) break;
      const page = await this.#o.events.read(this.#o.sessionId, { afterSequence: this.#durable.transcript.sequence, limit });
      if (page.length) {
        this.#durable = fold(this.#durable, page, this.#storedIds);
        read = true;
      }
      if (page.length < limit) break;
    }
    if (read) this.#reproject();
  }

  /** The optimistic view = the durable view plus what is still queued (other writers' events come first). */
  #reproject(): void {
    const unstored = this.#queue.filter((e) => !this.#storedIds.has(e.id!));
    this.#view = fold(this.#durable, this.#provisional(unstored, this.#durable.transcript.sequence));
    this.#o.onFolded?.(this.#view.turn);
  }
}

/**
 * Whether a failed append may have stored part of its events: anything but a refusal the
 * service itself decided (an id another session owns), which no retry changes.
 */
function isUnknownOutcome(err: unknown): boolean {
  return !(err instanceof AppError && err.status < 500);
}

/** The tool call a `tool.completed` answers; null for any other event. */
function resultCallId(e: NewEvent): string | null {
  // Tool results are built only by the turn engine, through the catalogue (turn-events.ts): read them as its union.
  const event = e as NewSessionEvent;
  return event.type === 'tool.completed' ? event.data.tool_call_id : null;
}
