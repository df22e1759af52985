import {
  DeliverPolicy,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  type MsgRequest,
  type StoredMsg,
} from '@nats-io/jetstream';
import { isAnyUuid, uuidv7Millis } from '../../ids.js';
import { isNoResponders } from './nats-errors.js';
import { retry, retryPolicies } from '../../retry/index.js';
import type { ReadOptions, LoggedEvent } from '../ports.js';
import type { PositionIndex, StreamTail } from './position-index.js';
import type { LeaderGet } from './leader-get.js';
import { findIdInWindow, type IdWindow, type SessionMsg } from './id-walk.js';
import { RecentEvents } from './recent-events.js';
import { assertUuid, sessionSubjects, type SessionSubjects } from './topology.js';

const DEFAULT_READ_LIMIT = 1000;
/** Up to this many events are read with single gets; more are worth an ordered consumer. */
const SINGLE_GET_MAX = 8;
/** Pull expiry of scans; they stop on `pending === 0` first, so this only bounds a racing purge, in ms. */
const SCAN_EXPIRES_MS = 5_000;
const SCAN_BATCH = 256;
/** The server forgets a msg id up to this long after its duplicate window (its purge timer), in ms. */
const DEDUP_PURGE_MARGIN_MS = 5_000;
/**
 * An id lookup starts this long before the id's time, in ms: a writer stores an id milliseconds
 * after minting it, so the event is a few gets from there; a clock further ahead of the server's
 * is still covered (the rest of the skew margin is searched next).
 */
const NEAR_SKEW_MS = 250;

/** The session's last stored event: per-session sequence, stream sequence, id. */
export type { StreamTail } from './position-index.js';

export interface EventReaderDeps {
  js: JetStreamClient;
  jsm: JetStreamManager;
  shards: number;
  positions: PositionIndex;
  /** findById starts this long before the id's timestamp and stops this long after it, in ms. */
  findSkewMs: number;
  /** The event streams' duplicate window, in ms. */
  duplicateWindowMs: number;
  /** Leader gets (default `jsm.streams.getMessage`; the bus sends them again during an election, leader-get.ts). */
  getMessage?: LeaderGet;
}

type ScanStart = { seq: number } | { time: Date };

export interface Located {
  event: LoggedEvent;
  streamSeq: number;
}

/**
 * Reads on the event streams. Point lookups and lookups by id use the stream leader's
 * `STREAM.MSG.GET` (read-after-write: a writer that just appended sees its event, which a direct
 * get served by a lagging replica does not promise). Reads of more than a few events open a
 * short-lived ordered consumer filtered on the session subject (server 2.10 has no batch direct
 * get); lookups by id do not, since each consumer create and delete is a meta-group proposal
 * that every node of a cluster applies, and a restarted node must catch up on (id-walk.ts).
 */
export function createEventReader({
  js,
  jsm,
  shards,
  positions,
  findSkewMs,
  duplicateWindowMs,
  getMessage = (stream, query) => jsm.streams.getMessage(stream, query),
}: EventReaderDeps) {
  /** What this process appended lately: reads behind a tail that is one of ours need no gets. */
  const recent = new RecentEvents();

  function located(sessionId: string, sm: StoredMsg | null): SessionMsg | null {
    if (!sm) return null;
    const event = sm.json<LoggedEvent>();
    positions.record(sessionId, { sequence: event.sequence, streamSeq: sm.seq });
    return { event, streamSeq: sm.seq, time: sm.time.getTime() };
  }

  /** The first message of the session at stream sequence >= from. */
  async function nextFrom(sessionId: string, where: SessionSubjects, from: number): Promise<SessionMsg | null> {
    // The server accepts next_by_subj on STREAM.MSG.GET (2.9+); nats.js only types it for direct get.
    const query = { seq: from, next_by_subj: where.subject } as unknown as MsgRequest;
    return located(sessionId, await getMessage(where.stream, query));
  }

  async function loadTail(sessionId: string): Promise<StreamTail> {
    const where = sessionSubjects(sessionId, shards);
    const last = located(sessionId, await getMessage(where.stream, { last_by_subj: where.subject }));
    return last
      ? { sequence: last.event.sequence, streamSeq: last.streamSeq, id: last.event.id }
      : { sequence: 0, streamSeq: 0, id: undefined };
  }

  /**
   * The stream sequence to start reading at for events after `after`: a known position when
   * there is one, else the least X whose next session message has sequence > after, by
   * binary search between the closest known positions (or the stream start and the tail).
   */
  async function locate(
    sessionId: string,
    where: SessionSubjects,
    after: number,
    tail: StreamTail,
  ): Promise<{ start: number; hinted: boolean }> {
    if (after === 0) return { start: 1, hinted: false };
    const { below, above } = positions.bounds(sessionId, after);
    if (below?.sequence === after) return { start: below.streamSeq + 1, hinted: true };
    let lo = below ? below.streamSeq + 1 : 1;
    let hi = above && above.streamSeq <= tail.streamSeq ? above.streamSeq : tail.streamSeq;
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      const m = await nextFrom(sessionId, where, mid);
      if (!m || m.event.sequence > after) hi = mid;
      else if (m.event.sequence === after) return { start: m.streamSeq + 1, hinted: below !== undefined };
      else lo = m.streamSeq + 1;
    }
    return { start: lo, hinted: below !== undefined || above !== undefined };
  }

  /**
   * Visits the session's messages from a start position until `visit` returns false or none are
   * left. A pull that found nobody listening is retried on a new consumer that starts after the
   * last message visited (the ordered consumer's own reset keeps a start time next to the start
   * sequence, which the server refuses).
   */
  async function scan(where: SessionSubjects, start: ScanStart, visit: (event: LoggedEvent, m: JsMsg) => boolean): Promise<void> {
    let from = start;
    const track = (event: LoggedEvent, m: JsMsg) => {
      from = { seq: m.seq + 1 };
      return visit(event, m);
    };
    return retry(() => scanOnce(where, from, track), retryPolicies.scanNoResponders, { retryable: isNoResponders });
  }

  async function scanOnce(where: SessionSubjects, start: ScanStart, visit: (event: LoggedEvent, m: JsMsg) => boolean): Promise<void> {
    const oc = await js.consumers.get(where.stream, {
      filter_subjects: where.subject,
      ...('seq' in start
        ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: start.seq }
        : { deliver_policy: DeliverPolicy.StartTime, opt_start_time: start.time.toISOString() }),
    });
    try {
      let pending = (await oc.info(true)).num_pending;
      while (pending > 0) {
        const batch = await oc.fetch({ max_messages: Math.min(pending, SCAN_BATCH), expires: SCAN_EXPIRES_MS });
        let more = false;
        for await (const m of batch) {
          pending = m.info.pending;
          if (!visit(m.json<LoggedEvent>(), m)) return;
          more = true;
          if (pending === 0) break;
        }
        if (!more) return; // a purge raced us: nothing came
      }
    } finally {
      // Ordered consumers are ephemeral; deleting now beats waiting for the inactivity sweep.
      oc.delete().catch(() => undefined);
    }
  }

  async function readFrom(sessionId: string, where: SessionSubjects, start: number, after: number, count: number): Promise<LoggedEvent[]> {
    const out: LoggedEvent[] = [];
    if (count <= SINGLE_GET_MAX) {
      for (let from = start; out.length < count; ) {
        const m = await nextFrom(sessionId, where, from);
        if (!m) break;
        if (m.event.sequence > after) out.push(m.event);
        from = m.streamSeq + 1;
      }
      return out;
    }
    await scan(where, { seq: start }, (event, m) => {
      positions.record(sessionId, { sequence: event.sequence, streamSeq: m.seq });
      if (event.sequence > after) out.push(event);
      return out.length < count;
    });
    return out;
  }

  async function read(sessionId: string, { afterSequence = 0, limit = DEFAULT_READ_LIMIT }: ReadOptions = {}): Promise<LoggedEvent[]> {
    const where = sessionSubjects(sessionId, shards);
    const tail = await loadTail(sessionId);
    if (tail.sequence <= afterSequence || limit <= 0) return [];
    const known = recent.after(sessionId, afterSequence, tail, limit);
    if (known) return known;
    const count = Math.min(limit, tail.sequence - afterSequence);
    const { start, hinted } = await locate(sessionId, where, afterSequence, tail);
    const out = await readFrom(sessionId, where, start, afterSequence, count);
    if (hinted && out[0]?.sequence !== afterSequence + 1) {
      // A stale hint (e.g. the session was purged and refilled): search again without hints.
      positions.forget(sessionId);
      return read(sessionId, { afterSequence, limit });
    }
    return out;
  }

  /** Walks the session's messages by gets for an event id within a window of stored times (id-walk.ts). */
  async function findInWindow(sessionId: string, eventId: string, window: Omit<IdWindow, 'tailSeq'>): Promise<Located | null> {
    const where = sessionSubjects(sessionId, shards);
    const tail = await loadTail(sessionId);
    if (tail.streamSeq === 0) return null;
    return findIdInWindow(
      {
        nextFrom: (from) => nextFrom(sessionId, where, from),
        scanFrom: (from, visit) => scan(where, { seq: from }, (event, m) => visit({ event, streamSeq: m.seq, time: m.time.getTime() })),
      },
      eventId,
      { ...window, tailSeq: tail.streamSeq },
    );
  }

  /**
   * Finds an event by id from the id's UUIDv7 timestamp: among the session's messages stored
   * from that time minus the skew margin up to that time plus it. Ids must therefore be minted
   * within the margin of their append (true for ids the log generates and for writers that mint
   * ids just before appending). Single gets from the leader, no consumer (id-walk.ts).
   */
  async function findById(sessionId: string, eventId: string): Promise<LoggedEvent | null> {
    assertUuid(sessionId); // a bad session id is refused even when the event id is no UUID
    if (!isAnyUuid(eventId)) return null;
    const ms = uuidv7Millis(eventId);
    // No stored event is from the future; a caller's UUID (v4, or any) can name any time up to
    // the year 10889, which is no valid search window.
    if (ms > Date.now() + findSkewMs) return null;
    const found = await findInWindow(sessionId, eventId, { from: ms - findSkewMs, near: ms - NEAR_SKEW_MS, until: ms + findSkewMs });
    return found?.event ?? null;
  }

  /**
   * The session's event with this id among those stored within the duplicate window (and a
   * margin for the server's purge timer): where the copy behind a seq-0 duplicate is, however
   * long after its id was minted it was stored (event-append.ts). Not before the id's time less
   * the skew margin: nobody stores an id before it is minted.
   */
  async function findInDedupWindow(sessionId: string, eventId: string): Promise<Located | null> {
    const windowStart = Date.now() - duplicateWindowMs - DEDUP_PURGE_MARGIN_MS;
    const ms = isAnyUuid(eventId) ? uuidv7Millis(eventId) : windowStart;
    return findInWindow(sessionId, eventId, {
      from: Math.max(windowStart, ms - findSkewMs),
      near: Math.max(windowStart, ms - NEAR_SKEW_MS),
      until: Number.POSITIVE_INFINITY,
    });
  }

  /** The event stored at a stream sequence, whichever session it belongs to (no position is recorded). */
  async function getByStreamSeq(stream: string, seq: number): Promise<LoggedEvent | null> {
    return (await getMessage(stream, { seq }))?.json<LoggedEvent>() ?? null;
  }

  return { loadTail, read, findById, findInDedupWindow, getByStreamSeq, recent };
}

export type EventReader = ReturnType<typeof createEventReader>;
