import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { headers, type NatsConnection } from '@nats-io/transport-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConflictError } from '../../errors.js';
import { uuidv7Millis } from '../../ids.js';
import type { Logger } from '../../log.js';
import { createKeyedChain } from '../keyed-chain.js';
import { OrderedFeed } from '../ordered-feed.js';
import type { AppendResult, EventLog, EventSubscription, NewEvent, SessionEvent } from '../ports.js';
import { stampEvent } from '../session-event.js';
import { createEventReader, type StreamTail } from './event-reader.js';
import { isSequenceConflict, isTransientAppendError } from './nats-errors.js';
import { PositionIndex } from './position-index.js';
import { assertUuid, sessionSubjects, type SessionSubjects } from './topology.js';

/** Header carrying the per-session sequence next to the JSON copy (readable without parsing). */
export const SEQUENCE_HEADER = 'Sess-Seq';
const MAX_APPEND_ATTEMPTS = 50;
const MAX_CACHED_TAILS = 10_000;
/** Writer-supplied ids older than the dedup window minus this margin are looked up before appending, in ms. */
const DEDUP_WINDOW_MARGIN_MS = 5_000;

export interface NatsEventLogOptions {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  shards: number;
  log: Logger;
  duplicateWindowMs: number;
  /** Idle live subscribers re-check the log this often (lost core messages), in ms. */
  livePollMs: number;
  findSkewMs: number;
}

type AppendOne = { ok: true; event: SessionEvent; fresh: boolean } | { ok: false; currentSequence: number };

/**
 * The event log on JetStream (layout in topology.ts). Appends run one at a time per session
 * in this process (a promise chain) because expected-sequence publishes on one subject must
 * not be pipelined. Each publish carries `Nats-Msg-Id = event.id` (dedup) and
 * `expect.lastSubjectSequence` = the stream sequence of the session's last event (OCC), so
 * writers in other processes cannot fork the sequence: the loser reloads the tail and retries.
 *
 * Server 2.10 has no atomic batch publish, so an N-event append is N publishes. Each is
 * numbered after the previous, so sequences stay contiguous, but a writer in another process
 * may interleave between them; `expectedSequence` is checked before the first new event only.
 */
export function createNatsEventLog(o: NatsEventLogOptions): EventLog & { closeAll(): void } {
  const { nc, js, shards, log } = o;
  const positions = new PositionIndex();
  const reader = createEventReader({ js, jsm: o.jsm, shards, positions, findSkewMs: o.findSkewMs });
  const chain = createKeyedChain();
  const tails = new Map<string, StreamTail>(); // this process's view of each session's last event
  const feeds = new Set<OrderedFeed>();

  function rememberTail(sessionId: string, tail: StreamTail): void {
    tails.delete(sessionId);
    tails.set(sessionId, tail);
    if (tails.size > MAX_CACHED_TAILS) tails.delete(tails.keys().next().value!);
  }

  async function freshTail(sessionId: string): Promise<StreamTail> {
    const tail = await reader.loadTail(sessionId);
    rememberTail(sessionId, tail);
    return tail;
  }

  async function appendOne(sessionId: string, where: SessionSubjects, input: NewEvent, expected: number | undefined): Promise<AppendOne> {
    if (input.id && uuidv7Millis(input.id) < Date.now() - o.duplicateWindowMs + DEDUP_WINDOW_MARGIN_MS) {
      // Beyond the server's dedup window: look the id up ourselves.
      const stored = await reader.findById(sessionId, input.id);
      if (stored) return { ok: true, event: stored, fresh: false };
    }
    let fromServer = false;
    for (let attempt = 1; ; attempt++) {
      const cached = fromServer ? undefined : tails.get(sessionId);
      const tail = cached ?? (await freshTail(sessionId));
      fromServer = true;
      if (expected !== undefined && tail.sequence !== expected) {
        if (cached) continue; // the cache may be stale: the server decides
        const stored = input.id ? await reader.findById(sessionId, input.id) : null;
        return stored ? { ok: true, event: stored, fresh: false } : { ok: false, currentSequence: tail.sequence };
      }
      const event = stampEvent(sessionId, input, tail, new Date().toISOString());
      try {
        return await publish(sessionId, where, event, tail);
      } catch (err) {
        if (!isSequenceConflict(err) && !isTransientAppendError(err)) throw err;
        if (attempt >= MAX_APPEND_ATTEMPTS) throw new Error(`append to session ${sessionId}: still conflicting after ${attempt} attempts`, { cause: err });
        tails.delete(sessionId);
        log.debug({ sessionId, attempt }, 'event append conflict, retrying');
        if (attempt > 2) await sleep(Math.random() * Math.min(50, attempt));
      }
    }
  }

  async function publish(sessionId: string, where: SessionSubjects, event: SessionEvent, tail: StreamTail): Promise<AppendOne> {
    const h = headers();
    h.set(SEQUENCE_HEADER, String(event.sequence));
    const ack = await js.publish(where.subject, JSON.stringify(event), {
      msgID: event.id,
      expect: { lastSubjectSequence: tail.streamSeq },
      headers: h,
    });
    if (ack.duplicate) {
      // The id is stored already (a retry): hand back the stored copy, the tail is unchanged.
      const stored = await reader.getByStreamSeq(where.stream, ack.seq);
      if (!stored) throw new Error(`event ${event.id} was deduplicated against a message that is gone (purged?)`);
      if (stored.session_id !== sessionId) throw new ConflictError('Event id already used by another session');
      return { ok: true, event: stored, fresh: false };
    }
    rememberTail(sessionId, { sequence: event.sequence, streamSeq: ack.seq, id: event.id });
    positions.record(sessionId, { sequence: event.sequence, streamSeq: ack.seq });
    return { ok: true, event, fresh: true };
  }

  async function appendSerial(sessionId: string, input: NewEvent[], expectedSequence: number | undefined): Promise<AppendResult> {
    const where = sessionSubjects(sessionId, shards);
    const events: SessionEvent[] = [];
    let expected = expectedSequence;
    for (const e of input) {
      const r = await appendOne(sessionId, where, e, expected);
      if (!r.ok) return r; // nothing new was written yet: `expected` is cleared after the first write
      events.push(r.event);
      if (r.fresh) expected = undefined;
    }
    return { ok: true, events };
  }

  function subscribe(sessionId: string, { afterSequence = 0 } = {}): EventSubscription {
    const where = sessionSubjects(sessionId, shards);
    const feed = new OrderedFeed(
      {
        fetch: (after) => reader.read(sessionId, { afterSequence: after }),
        listen(push, fail) {
          const sub = nc.subscribe(where.live, {
            callback(err, msg) {
              if (err) return fail(err);
              let event: SessionEvent;
              try {
                event = msg.json<SessionEvent>();
              } catch (parseErr) {
                // Not one of ours; skipping it is safe: a real gap is back-filled from the log.
                return log.warn({ err: parseErr, sessionId }, 'unreadable live event skipped');
              }
              // Nats-Sequence is this event's stream sequence, Nats-Last-Sequence the previous
              // one on the subject (sequence - 1): both become hints, so a gap is back-filled
              // from exactly the right place in the stream.
              const seq = Number(msg.headers?.get('Nats-Sequence'));
              const prev = Number(msg.headers?.get('Nats-Last-Sequence'));
              if (seq > 0) positions.record(sessionId, { sequence: event.sequence, streamSeq: seq });
              if (prev > 0) positions.record(sessionId, { sequence: event.sequence - 1, streamSeq: prev });
              push(event);
            },
          });
          // Once the server has our SUB, nothing stored later can be missed by the replay.
          return { stop: () => sub.unsubscribe(), ready: nc.flush() };
        },
        idlePollMs: o.livePollMs,
      },
      afterSequence,
    );
    feeds.add(feed);
    void feed.closed().then(() => feeds.delete(feed));
    return feed;
  }

  return {
    async append(sessionId, events, opts = {}) {
      sessionSubjects(sessionId, shards);
      for (const e of events) if (e.id !== undefined) assertUuid(e.id);
      if (events.length === 0) return { ok: true, events: [] };
      return chain.run(sessionId, () => appendSerial(sessionId, events, opts.expectedSequence));
    },
    read: reader.read,
    findById: reader.findById,
    async lastSequence(sessionId) {
      return (await freshTail(sessionId)).sequence;
    },
    subscribe,
    async purge(sessionId) {
      const where = sessionSubjects(sessionId, shards);
      await chain.run(sessionId, async () => {
        await o.jsm.streams.purge(where.stream, { filter: where.subject });
        tails.delete(sessionId);
        positions.forget(sessionId);
      });
    },
    closeAll() {
      for (const feed of feeds) feed.close();
    },
  };
}
