import type { PubAck } from '@nats-io/jetstream';
import { MsgHdrsImpl } from '@nats-io/nats-core';
import { ConflictError, ServiceUnavailableError } from '../../errors.js';
import type { AckedPublisher } from './acked-publisher.js';
import type { NewEvent, SessionEvent } from '../ports.js';
import { stampEvent } from '../session-event.js';
import type { EventReader, StreamTail } from './event-reader.js';
import { isChainBroken, isSequenceConflict, isTransientAppendError } from './nats-errors.js';
import type { SessionSubjects } from './topology.js';

/** Header carrying the per-session sequence next to the JSON copy (readable without parsing). */
export const SEQUENCE_HEADER = 'Sess-Seq';

export interface AppendRoundDeps {
  /** `js.publish`, or the same publish without nats.js's per-request overhead (acked-publisher.ts). */
  js: Pick<AckedPublisher, 'publish'>;
  reader: Pick<EventReader, 'getByStreamSeq' | 'findById'>;
  /**
   * A fresh event was stored at `streamSeq`, right behind the session's message at
   * `prevStreamSeq` (0: the first) (tail cache, position hints, recent events).
   */
  onStored(event: SessionEvent, streamSeq: number, prevStreamSeq: number): void;
}

/**
 * `stored`: the first events of the run are in the log (ours, or copies stored earlier under
 * the same ids), at least one; `wrote` says whether any of them is new. `refused`: the first
 * event was refused (another writer appended since `tail`, or a transient refusal) and nothing
 * of the run was stored.
 */
export type RoundOutcome = { type: 'stored'; events: SessionEvent[]; wrote: boolean } | { type: 'refused'; err: unknown };

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
 */
export async function publishRound(
  deps: AppendRoundDeps,
  sessionId: string,
  where: SessionSubjects,
  run: readonly NewEvent[],
  tail: StreamTail,
): Promise<RoundOutcome> {
  const ts = new Date().toISOString();
  const stamped: SessionEvent[] = [];
  for (const input of run) stamped.push(stampEvent(sessionId, input, stamped.at(-1) ?? tail, ts));
  const acks = await Promise.allSettled(
    stamped.map((event, i) =>
      publish(deps.js, where.subject, event, i === 0 ? { lastSubjectSequence: tail.streamSeq } : { lastMsgID: stamped[i - 1]!.id }),
    ),
  );
  const events: SessionEvent[] = [];
  let wrote = false;
  let offChain = false;
  for (let i = 0; i < acks.length; i++) {
    const result = acks[i]!;
    if (result.status === 'rejected') {
      if (!isRefusal(result.reason)) throw result.reason; // a timeout or a broken connection: the state is unknown
      assertNoneStoredAfter(acks, i, stamped);
      if (i === 0) return { type: 'refused', err: result.reason };
      break;
    }
    const ack = result.value;
    if (ack.duplicate) {
      const stored = await storedCopy(deps, sessionId, where.stream, ack.seq, stamped[i]!.id);
      offChain ||= stored.sequence !== stamped[i]!.sequence;
      events.push(stored);
      continue;
    }
    if (offChain)
      throw new Error(`session ${sessionId}: event ${stamped[i]!.id} was stored after a copy numbered differently; its sequence is wrong`);
    // What the server checked before storing it: the tail (first event) or the predecessor.
    const prevStreamSeq = i === 0 ? tail.streamSeq : (acks[i - 1] as PromiseFulfilledResult<PubAck>).value.seq;
    deps.onStored(stamped[i]!, ack.seq, prevStreamSeq);
    events.push(stamped[i]!);
    wrote = true;
  }
  return { type: 'stored', events, wrote };
}

function publish(
  js: AppendRoundDeps['js'],
  subject: string,
  event: SessionEvent,
  expect: { lastSubjectSequence: number } | { lastMsgID: string },
): Promise<PubAck> {
  // fromRecord: no key canonicalisation or value check for a constant name and a number.
  const h = MsgHdrsImpl.fromRecord({ [SEQUENCE_HEADER]: [String(event.sequence)] });
  return js.publish(subject, JSON.stringify(event), { msgID: event.id, expect, headers: h });
}

/** Refusals mean the event was not stored; anything else leaves its fate unknown. */
function isRefusal(err: unknown): boolean {
  return isSequenceConflict(err) || isChainBroken(err) || isTransientAppendError(err);
}

/** After a refused event every later one must have been refused too (or be a duplicate). */
function assertNoneStoredAfter(acks: PromiseSettledResult<PubAck>[], refused: number, stamped: SessionEvent[]): void {
  for (let j = refused + 1; j < acks.length; j++) {
    const r = acks[j]!;
    if (r.status === 'fulfilled' && !r.value.duplicate) {
      throw new Error(
        `session ${stamped[j]!.session_id}: event ${stamped[j]!.id} was stored although its predecessor was refused; its sequence is wrong`,
      );
    }
  }
}

/** How long a seq-0 duplicate waits for the publish it names to be stored, in ms. */
const PENDING_COPY_WAIT_MS = 2_000;
const PENDING_COPY_POLL_MS = 20;

/**
 * The stored copy behind a duplicate ack (the tail is unchanged by it). A replicated stream
 * acks `seq: 0` when the id belongs to a publish it has not stored (still being replicated, as
 * when a worker and the API append a turn's preamble at once, or refused): there is no stream
 * sequence to read, so the copy is looked up by id until it shows up.
 */
async function storedCopy(deps: AppendRoundDeps, sessionId: string, stream: string, seq: number, id: string): Promise<SessionEvent> {
  const stored = seq > 0 ? await deps.reader.getByStreamSeq(stream, seq) : await pendingCopy(deps, sessionId, id);
  if (!stored) throw new Error(`event ${id} was deduplicated against a message that is gone (purged?)`);
  if (stored.session_id !== sessionId) throw new ConflictError('Event id already used by another session');
  return stored;
}

async function pendingCopy(deps: AppendRoundDeps, sessionId: string, id: string): Promise<SessionEvent> {
  const deadline = Date.now() + PENDING_COPY_WAIT_MS;
  for (;;) {
    const stored = await deps.reader.findById(sessionId, id);
    if (stored) return stored;
    if (Date.now() > deadline)
      throw new ServiceUnavailableError(undefined, { cause: new Error(`event ${id}: the stream holds its id but not the event`) });
    await new Promise((r) => setTimeout(r, PENDING_COPY_POLL_MS));
  }
}
