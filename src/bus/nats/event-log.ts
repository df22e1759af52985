import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import type { Msg, NatsConnection } from '@nats-io/transport-node';
import { retrier, retryPolicies } from '../../retry/index.js';
import { uuidv7Millis } from '../../ids.js';
import type { Logger } from '../../log.js';
import { createKeyedChain } from '../keyed-chain.js';
import { RecencyMap } from '../recency-map.js';
import { iterateFeed } from '../feed-iterator.js';
import { FeedGroup } from '../ordered-feed.js';
import type { AppendOptions, AppendResult, EventLog, EventSink, FeedHandle, NewLoggedEvent, ReadOptions, LoggedEvent } from '../ports.js';
import type { AckedPublisher } from './acked-publisher.js';
import { publishRound, SEQUENCE_HEADER, type InFlightRounds } from './event-append.js';
import type { LeaderGet } from './leader-get.js';
import { createEventReader, type StreamTail } from './event-reader.js';
import { numericHeaders } from './msg-headers.js';
import { LiveSubscriptions } from './live-subscriptions.js';
import { PositionIndex } from './position-index.js';
import { assertUuid, sessionSubjects, type SessionSubjects } from './topology.js';

const MAX_CACHED_TAILS = 10_000;
/**
 * A session not appended to for this long loses its cached tail, in ms: the tail saves the
 * lookup before each append of a conversation; the first append after a minute's pause (the
 * next user turn) looks it up again, one round trip.
 */
const TAIL_IDLE_MS = 60_000;
/** What a republished event says about where it and its predecessor are stored. */
const LIVE_POSITION_HEADERS = ['Nats-Sequence', 'Nats-Last-Sequence', SEQUENCE_HEADER] as const;
const EMPTY_TAIL: StreamTail = { sequence: 0, streamSeq: 0, id: undefined };
/** Writer-supplied ids older than the dedup window minus this margin are looked up before appending, in ms. */
const DEDUP_WINDOW_MARGIN_MS = 5_000;

export interface NatsEventLogOptions {
  nc: NatsConnection;
  js: JetStreamClient;
  /** Publishes events with acks; default `js`. */
  publisher?: Pick<AckedPublisher, 'publish'>;
  jsm: JetStreamManager;
  /** Leader gets (default `jsm.streams.getMessage`). */
  getMessage?: LeaderGet;
  shards: number;
  log: Logger;
  duplicateWindowMs: number;
  /** This process stored a session's first event (a new session: nothing of it was claimed yet). */
  onFirstEvent?: (sessionId: string) => void;
  /** Idle live subscribers re-check the log this often (lost core messages), in ms… */
  livePollMs: number;
  /** …backing off to this while the checks find nothing (ordered-feed.ts); default livePollMs. */
  livePollMaxMs?: number;
  findSkewMs: number;
  /** A shard's live events come through one wildcard subscription from this many watched sessions of it on (live-subscriptions.ts); 0 = never. */
  liveWildcardMinSessions: number;
}

/** What one run of an append stored (its first events, at least one), or the OCC refusal. */
type AppendRun = { ok: true; events: LoggedEvent[]; wrote: boolean } | { ok: false; currentSequence: number };

/**
 * The event log on JetStream (layout in topology.ts). Appends run one at a time per session
 * in this process (a promise chain). Each publish carries `Nats-Msg-Id = event.id` (dedup);
 * the first of a round `expect.lastSubjectSequence` = the stream sequence of the session's last
 * event (OCC), so writers in other processes cannot fork the sequence: the loser reloads the
 * tail and retries. With `newIds` the rest of the batch is chained onto it (event-append.ts),
 * so such an append usually takes one round trip; otherwise each event is a round of its own.
 *
 * Server 2.10 has no atomic batch publish: a writer in another process may interleave between
 * the events of one append (then the rest goes out in another round); sequences stay
 * contiguous, and `expectedSequence` is checked before the first new event only.
 */
export function createNatsEventLog(o: NatsEventLogOptions): EventLog<LoggedEvent> & { closeAll(): void; staleAll(): void } {
  const { nc, js, shards, log } = o;
  const positions = new PositionIndex();
  const reader = createEventReader({
    js,
    jsm: o.jsm,
    getMessage: o.getMessage,
    shards,
    positions,
    findSkewMs: o.findSkewMs,
    duplicateWindowMs: o.duplicateWindowMs,
  });
  const chain = createKeyedChain();
  // This process's view of each session's last event (a hint: the append's OCC check decides).
  const tails = new RecencyMap<string, StreamTail>({ max: MAX_CACHED_TAILS, idleMs: TAIL_IDLE_MS });

  async function freshTail(sessionId: string): Promise<StreamTail> {
    const tail = await reader.loadTail(sessionId);
    tails.set(sessionId, tail);
    return tail;
  }

  const isBeyondDedupWindow = (e: NewLoggedEvent) =>
    e.id !== undefined && uuidv7Millis(e.id) < Date.now() - o.duplicateWindowMs + DEDUP_WINDOW_MARGIN_MS;

  const inFlight: InFlightRounds = new Map();
  const roundDeps = {
    js: o.publisher ?? js,
    reader,
    inFlight,
    onStored(event: LoggedEvent, streamSeq: number, prevStreamSeq: number) {
      tails.set(event.session_id, { sequence: event.sequence, streamSeq, id: event.id });
      positions.record(event.session_id, { sequence: event.sequence, streamSeq });
      reader.recent.remember({ event, streamSeq, prevStreamSeq });
      if (prevStreamSeq === 0) o.onFirstEvent?.(event.session_id);
    },
  };

  /** Appends the first events of `run` (numbered after the tail), retrying while other writers get in first. */
  async function appendRun(
    sessionId: string,
    where: SessionSubjects,
    run: readonly NewLoggedEvent[],
    expected: number | undefined,
    newIds: boolean,
  ): Promise<AppendRun> {
    let fromServer = false;
    const conflicts = retrier(retryPolicies.appendConflict, {
      onRetry: ({ attempt }) => log.debug({ sessionId, attempt }, 'event append conflict, retrying'),
    });
    for (;;) {
      // A caller that expects an empty session (session create, a fresh id) is taken at its word
      // for the first round: the server's expected-last-sequence check refuses the round when
      // the session has events, and the retry reads the tail. Saves a get that answers 404.
      const cached = fromServer ? undefined : (tails.get(sessionId) ?? (expected === 0 ? EMPTY_TAIL : undefined));
      const tail = cached ?? (await freshTail(sessionId));
      fromServer = true;
      if (expected !== undefined && tail.sequence !== expected) {
        if (cached) {
          // The cache may be stale: the server decides, on the next round (counted as one).
          await conflicts.failed(undefined);
          continue;
        }
        const head = run[0]!;
        const stored = head.id && !newIds ? await reader.findById(sessionId, head.id) : null;
        return stored ? { ok: true, events: [stored], wrote: false } : { ok: false, currentSequence: tail.sequence };
      }
      const round = await publishRound(roundDeps, sessionId, where, run, tail);
      if (round.type === 'stored') return { ok: true, events: round.events, wrote: round.wrote };
      const { attempt } = conflicts;
      tails.delete(sessionId);
      if (!(await conflicts.failed(round.err)))
        throw new Error(`append to session ${sessionId}: still conflicting after ${attempt} attempts`, { cause: round.err });
    }
  }

  /**
   * With `newIds` the whole batch is one run (chained, event-append.ts). Otherwise an id may be
   * stored already, and events must not be chained onto a stored copy numbered differently from
   * ours: events go one per run until one of them is stored fresh (at the position we numbered,
   * which the server checked), then the rest is chained behind it. So a batch of ids another
   * writer may hold too (the API's preamble) takes two round trips instead of one per event.
   */
  async function appendEvents(
    sessionId: string,
    input: readonly NewLoggedEvent[],
    { expectedSequence, newIds = false }: AppendOptions,
  ): Promise<AppendResult<LoggedEvent>> {
    const where = sessionSubjects(sessionId, shards);
    const events: LoggedEvent[] = [];
    let expected = expectedSequence;
    let chained = newIds;
    for (let i = 0; i < input.length; ) {
      if (!newIds && isBeyondDedupWindow(input[i]!)) {
        // The server no longer remembers ids this old: look it up ourselves.
        const stored = await reader.findById(sessionId, input[i]!.id!);
        if (stored) {
          events.push(stored);
          i++;
          continue;
        }
      }
      const r = await appendRun(sessionId, where, chained ? input.slice(i) : [input[i]!], expected, chained);
      if (!r.ok) return r; // nothing new was written yet: `expected` is cleared after the first write
      events.push(...r.events);
      i += r.events.length;
      if (r.wrote) {
        expected = undefined;
        // Ids the server may have forgotten are looked up one by one above, so they are never chained.
        chained ||= !input.slice(i).some(isBeyondDedupWindow);
      }
    }
    return { ok: true, events };
  }

  /**
   * A read that ends at or below a tail this process stored or looked up lately needs no tail
   * lookup: those events are stored for good (the log is append-only; a purge here forgets the
   * tail), so the ones this process appended answer it. SSE open reads the tail and then replays
   * up to it: one get instead of two. Null otherwise (the read goes to the server).
   */
  function withinKnownTail(sessionId: string, { afterSequence = 0, limit }: ReadOptions = {}): Promise<LoggedEvent[]> | null {
    const tail = limit !== undefined && limit > 0 ? tails.get(sessionId) : undefined;
    if (!tail || afterSequence + limit! > tail.sequence) return null;
    const known = reader.recent.after(sessionId, afterSequence, tail, limit!);
    return known ? Promise.resolve(known) : null;
  }

  /**
   * A republished event of a watched session, its stream positions kept as hints: Nats-Sequence
   * is its stream sequence, Nats-Last-Sequence the previous one on the subject (sequence - 1),
   * so a gap is back-filled from exactly the right place in the stream.
   */
  function decodeLive(sessionId: string, msg: Msg): LoggedEvent | undefined {
    const [seq = 0, prev = 0, sequence = 0] = numericHeaders(msg, LIVE_POSITION_HEADERS);
    let event = publishedHere(sessionId, sequence, msg);
    if (!event) {
      try {
        event = msg.json<LoggedEvent>();
      } catch (parseErr) {
        // Not one of ours; skipping it is safe: a real gap is back-filled from the log.
        log.warn({ err: parseErr, sessionId }, 'unreadable live event skipped');
        return undefined;
      }
    }
    if (seq > 0) positions.record(sessionId, { sequence: event.sequence, streamSeq: seq });
    if (prev > 0) positions.record(sessionId, { sequence: event.sequence - 1, streamSeq: prev });
    return event;
  }

  /**
   * The live copy of an event this process is publishing, without decoding it: the event
   * object whose published bytes the message carries (equal bytes: the same JSON, so the same
   * event, whoever stored it). The server republishes before it acks, so the round is still
   * in flight; a copy that comes later is decoded.
   */
  function publishedHere(sessionId: string, sequence: number, msg: Msg): LoggedEvent | undefined {
    const round = sequence > 0 ? inFlight.get(sessionId) : undefined;
    if (!round) return undefined;
    const i = sequence - round.events[0]!.sequence;
    const payload = round.payloads[i];
    return payload !== undefined && Buffer.compare(msg.data, payload) === 0 ? round.events[i] : undefined;
  }

  const live = new LiveSubscriptions({ nc, shards, wildcardMinSessions: o.liveWildcardMinSessions, decode: decodeLive });

  const feeds = new FeedGroup({
    fetch: (sessionId, after) => reader.read(sessionId, { afterSequence: after }),
    listen: (sessionId, input) => live.listen(sessionId, input),
    idlePollMs: o.livePollMs,
    idlePollMaxMs: o.livePollMaxMs,
  });

  function follow(sessionId: string, sink: EventSink<LoggedEvent>, { afterSequence = 0 } = {}): FeedHandle {
    return feeds.open(sessionId, sink, afterSequence);
  }

  return {
    async append(sessionId, events, opts = {}) {
      sessionSubjects(sessionId, shards);
      for (const e of events) if (e.id !== undefined) assertUuid(e.id);
      if (events.length === 0) return { ok: true, events: [] };
      return chain.run(sessionId, () =>
        appendEvents(sessionId, events, opts).catch((err: unknown) => {
          tails.delete(sessionId); // what was stored is unknown now
          throw err;
        }),
      );
    },
    read: (sessionId, opts) => withinKnownTail(sessionId, opts) ?? reader.read(sessionId, opts),
    findById: reader.findById,
    async lastSequence(sessionId) {
      return (await freshTail(sessionId)).sequence;
    },
    follow,
    subscribe: (sessionId, opts) => iterateFeed((sink) => follow(sessionId, sink, opts)),
    async purge(sessionId) {
      const where = sessionSubjects(sessionId, shards);
      await chain.run(sessionId, async () => {
        await o.jsm.streams.purge(where.stream, { filter: where.subject });
        tails.delete(sessionId);
        positions.forget(sessionId);
      });
    },
    closeAll: () => feeds.closeAll(),
    /** After a reconnect: live messages sent while disconnected are gone, so every feed re-reads the log. */
    staleAll: () => feeds.staleAll(),
  };
}
