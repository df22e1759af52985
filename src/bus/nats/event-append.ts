import type { PubAck } from '@nats-io/jetstream';
import { randomUUID } from 'node:crypto';
import { MsgHdrsImpl } from '@nats-io/nats-core';
import { ConflictError } from '../../errors.js';
import type { AckedPublisher } from './acked-publisher.js';
import type { NewLoggedEvent, LoggedEvent } from '../ports.js';
import { rememberJson } from '../event-json.js';
import { stampEvent } from '../session-event.js';
import type { EventReader, StreamTail } from './event-reader.js';
import { isChainBroken, isSequenceConflict, isTransientAppendError } from './nats-errors.js';
import type { SessionSubjects } from './topology.js';

/** Header carrying the per-session sequence next to the JSON copy (readable without parsing). */
export const SEQUENCE_HEADER = 'Sess-Seq';

export interface AppendRoundDeps {
  /** `js.publish`, or the same publish without nats.js's per-request overhead (acked-publisher.ts). */
  js: Pick<AckedPublisher, 'publish'>;
  reader: Pick<EventReader, 'getByStreamSeq' | 'findInDedupWindow'>;
  /**
   * A fresh event was stored at `streamSeq`, right behind the session's message at
   * `prevStreamSeq` (0: the first) (tail cache, position hints, recent events).
   */
  onStored(event: LoggedEvent, streamSeq: number, prevStreamSeq: number): void;
  /**
   * The round's events and the bytes each is published as, from just before the first publish
   * until every ack is in (the server republishes an event to its live subject before it acks):
   * a live copy with the same bytes is this event (event-log.ts `decodeLive`).
   */
  inFlight?: InFlightRounds;
}

/** Per session, the round this process is publishing (appends of a session are one at a time). */
export type InFlightRounds = Map<string, { events: readonly LoggedEvent[]; payloads: Uint8Array[] }>;

/**
 * `stored`: the first events of the run are in the log (ours, or copies stored earlier under
 * the same ids), at least one; `wrote` says whether any of them is new. `refused`: the first
 * event was refused (another writer appended since `tail`, or a transient refusal) and nothing
 * of the run was stored.
 */
export type RoundOutcome = { type: 'stored'; events: LoggedEvent[]; wrote: boolean } | { type: 'refused'; err: unknown };

/**
 * One round of an append: numbers the run after `tail` and publishes all of it back to back,
 * then reads the acks in order. Server 2.10 has no atomic batch publish; this makes an N-event
 * append one round trip instead of N while keeping every stored sequence exact:
 *
 * - The first event carries `expect.lastSubjectSequence` = the tail's stream sequence (OCC): it
 *   is stored only if nobody appended to the session since the tail we numbered from. A stale
 *   worker's round ends here.
 * - Every later event carries `expect.lastMsgID` = its predecessor's id: the server stores it
 *   only if that predecessor is the last message of the whole stream, so nothing (of any
 *   session) lies between them and the number given in advance is right. When an event is
 *   refused, none after it can be stored. All are published in one synchronous burst on one
 *   connection, so on a single instance the chain only breaks when another instance's
 *   message lands in between; then the rest goes out in the next round.
 * - A duplicate (the id is stored already) hands back the stored copy. If that copy is numbered
 *   differently from ours and a later event of the run was stored after it, that later event
 *   is misnumbered: impossible unless two writers append the same ids while a third
 *   interleaves, and reported as an error rather than passed over.
 * - A duplicate with sequence 0 names an id the stream holds without an event (see
 *   `storedCopy`): stored under OCC and a msg id of its own unless a copy turns up.
 */
export async function publishRound(
  deps: AppendRoundDeps,
  sessionId: string,
  where: SessionSubjects,
  run: readonly NewLoggedEvent[],
  tail: StreamTail,
): Promise<RoundOutcome> {
  const ts = new Date().toISOString();
  const stamped: LoggedEvent[] = [];
  for (const input of run) stamped.push(stampEvent(sessionId, input, stamped.at(-1) ?? tail, ts));
  const payloads = stamped.map(encode);
  const round = { events: stamped, payloads };
  deps.inFlight?.set(sessionId, round);
  let acks: PromiseSettledResult<PubAck>[];
  try {
    acks = await Promise.allSettled(
      stamped.map((event, i) =>
        publish(
          deps.js,
          where.subject,
          event,
          i === 0 ? { lastSubjectSequence: tail.streamSeq } : { lastMsgID: stamped[i - 1]!.id },
          payloads[i],
        ),
      ),
    );
  } finally {
    if (deps.inFlight?.get(sessionId) === round) deps.inFlight.delete(sessionId);
  }
  const events: LoggedEvent[] = [];
  let wrote = false;
  let offChain = false;
  // What the server checked the next event against: the tail, then each event's stream sequence.
  let prevStreamSeq = tail.streamSeq;
  for (let i = 0; i < acks.length; i++) {
    const result = acks[i]!;
    let ack: PubAck;
    if (result.status === 'rejected') {
      if (!isRefusal(result.reason)) throw result.reason; // a timeout or a broken connection: the state is unknown
      assertNoneStoredAfter(acks, i, stamped);
      if (i === 0) return { type: 'refused', err: result.reason };
      break;
    }
    if (!result.value.duplicate) ack = result.value;
    else {
      const copy = await storedCopy(deps, sessionId, where, result.value.seq, stamped[i]!, offChain ? null : prevStreamSeq);
      if (copy.type === 'refused') {
        assertNoneStoredAfter(acks, i, stamped);
        if (i === 0) return copy;
        break;
      }
      if (copy.type === 'copy') {
        offChain ||= copy.event.sequence !== stamped[i]!.sequence;
        events.push(copy.event);
        prevStreamSeq = copy.streamSeq;
        continue;
      }
      ack = copy.ack;
    }
    if (offChain)
      throw new Error(`session ${sessionId}: event ${stamped[i]!.id} was stored after a copy numbered differently; its sequence is wrong`);
    deps.onStored(stamped[i]!, ack.seq, prevStreamSeq);
    events.push(stamped[i]!);
    prevStreamSeq = ack.seq;
    wrote = true;
  }
  return { type: 'stored', events, wrote };
}

/**
 * The event's JSON, once: its text is kept for the SSE frame (event-json.ts), its UTF-8 bytes
 * are what nats.js sends (it encodes a string payload itself) and what a live copy is matched by.
 */
function encode(event: LoggedEvent): Uint8Array {
  const json = JSON.stringify(event);
  rememberJson(event, json);
  return Buffer.from(json);
}

function publish(
  js: AppendRoundDeps['js'],
  subject: string,
  event: LoggedEvent,
  expect: { lastSubjectSequence: number } | { lastMsgID: string },
  payload: Uint8Array = encode(event),
  msgID = event.id,
): Promise<PubAck> {
  // fromRecord: no key canonicalisation or value check for a constant name and a number.
  const h = MsgHdrsImpl.fromRecord({ [SEQUENCE_HEADER]: [String(event.sequence)] });
  return js.publish(subject, payload, { msgID, expect, headers: h });
}

/** Refusals mean the event was not stored; anything else leaves its fate unknown. */
function isRefusal(err: unknown): boolean {
  return isSequenceConflict(err) || isChainBroken(err) || isTransientAppendError(err);
}

/** After a refused event every later one must have been refused too (or be a duplicate). */
function assertNoneStoredAfter(acks: PromiseSettledResult<PubAck>[], refused: number, stamped: LoggedEvent[]): void {
  for (let j = refused + 1; j < acks.length; j++) {
    const r = acks[j]!;
    if (r.status === 'fulfilled' && !r.value.duplicate) {
      throw new Error(
        `session ${stamped[j]!.session_id}: event ${stamped[j]!.id} was stored although its predecessor was refused; its sequence is wrong`,
      );
    }
  }
}

/** What stands behind a duplicate ack: a stored copy, our event stored after all, or a refusal of it. */
type Copy = { type: 'copy'; event: LoggedEvent; streamSeq: number } | { type: 'stored'; ack: PubAck } | { type: 'refused'; err: unknown };

/**
 * The stored copy behind a duplicate ack (the tail is unchanged by it). With `seq: 0` a
 * replicated stream names an id it holds without an event: server 2.10 stages a publish's id
 * on the leader before the replicas agree and keeps it for the whole duplicate window, also
 * when the publish is then refused (a chain broken by another writer, an OCC conflict found
 * only when applying), and acks every later publish of that id as such a duplicate, storing
 * nothing (issue 13: a worker re-sending a dying API's preamble spent 60 s on this, and the
 * turn waited two minutes). A copy, if there is one, was stored after that id was staged, so
 * within the window (by its staged publish, or by one like ours below, which leaves the id
 * staged): the session's events of the window are read by id. When none is the copy, `event`
 * is published under a fresh msg id (the turn queue's answer to the same server behaviour,
 * turn-queue.ts `enqueue`) and OCC on its predecessor (`prevStreamSeq`; null: its
 * predecessor is a copy numbered differently, so it is left to the next round). That cannot
 * store it twice: a staged copy that is stored still comes first (the leader applies in
 * proposal order), and then moves the subject on so ours is refused and the next round finds it.
 */
async function storedCopy(
  deps: AppendRoundDeps,
  sessionId: string,
  where: SessionSubjects,
  seq: number,
  event: LoggedEvent,
  prevStreamSeq: number | null,
): Promise<Copy> {
  if (seq === 0) {
    const found = await deps.reader.findInDedupWindow(sessionId, event.id);
    if (found) return { type: 'copy', ...found };
    // Behind a copy numbered differently ours would be misnumbered: the next round renumbers it.
    if (prevStreamSeq === null) return { type: 'refused', err: new Error(`event ${event.id} follows a copy numbered differently`) };
    let ack: PubAck;
    try {
      ack = await publish(deps.js, where.subject, event, { lastSubjectSequence: prevStreamSeq }, undefined, `${event.id}.${randomUUID()}`);
    } catch (err) {
      if (isRefusal(err)) return { type: 'refused', err };
      throw err;
    }
    // An id of this publish alone: a duplicate is a re-send of it (acked-publisher.ts), stored
    // at `seq`, or with 0 still being decided, which leaves its fate unknown.
    if (ack.duplicate && ack.seq === 0) throw new Error(`event ${event.id}: a fresh msg id was acked as a staged duplicate`);
    return { type: 'stored', ack };
  }
  const stored = await deps.reader.getByStreamSeq(where.stream, seq);
  if (!stored) throw new Error(`event ${event.id} was deduplicated against a message that is gone (purged?)`);
  if (stored.session_id !== sessionId) throw new ConflictError('Event id already used by another session');
  return { type: 'copy', event: stored, streamSeq: seq };
}
