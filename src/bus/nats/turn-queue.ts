import { randomUUID } from 'node:crypto';
import type { Consumer, JetStreamClient, JetStreamManager, JsMsg, PubAck } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import { Empty, headers } from '@nats-io/transport-node';
import { SessionBusyError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { ClaimOptions, TurnClaim, TurnJob, TurnQueue } from '../ports.js';
import type { NatsConnection } from '@nats-io/transport-node';
import type { LeaderGet } from './leader-get.js';
import type { AckedPublisher } from './acked-publisher.js';
import { confirmedNak } from './confirmed-nak.js';
import { createProcessPresence } from './process-presence.js';
import { RecencyMap } from '../recency-map.js';
import { isAlreadyDeleted, isSequenceConflict, isSubjectFull, isSubjectTaken } from './nats-errors.js';
import { assertUuid, CLAIM_BUCKET, CLAIM_STREAM, TURN_CONSUMER, TURN_STREAM, turnSubject } from './topology.js';
import { retry, retryPolicies } from '../../retry/index.js';

/** nats.js refuses pull requests that expire sooner than this, in ms. */
const MIN_PULL_EXPIRES_MS = 1_000;
/** Sessions whose claim record revision this process remembers (its own releases). */
const MAX_REMEMBERED_RELEASES = 10_000;
/**
 * A release is forgotten after this long, in ms: it saves one read of the claim record when the
 * session's next turn comes soon after (a conversation); after a minute's pause that turn reads
 * the record first, as a claim with no remembered release always does.
 */
const RELEASE_IDLE_MS = 60_000;

/** Marks a KV entry as a delete (DEL) or purge (PURGE) marker (ADR-8); absent on values. */
const KV_OPERATION_HEADER = 'KV-Operation';
const claimSubject = (sessionId: string) => `$KV.${CLAIM_BUCKET}.${sessionId}`;
const UTF8 = new TextDecoder();

/**
 * The record a claim-bucket message holds; null for a delete or purge marker. Markers are the
 * only empty messages of the bucket (nats.js' `kv.delete` / `kv.purge` and `deleteClaim` send an
 * empty body with the `KV-Operation` header; a record is JSON), so the body decides without
 * decoding the headers: a get reply carries them base64-encoded, and the check runs before
 * every append of a turn. The body is decoded once (nats.js' `json()` decodes it again and
 * builds a TextDecoder per call).
 */
function claimOf(data: Uint8Array): ClaimRecord | null {
  return data.length === 0 ? null : (JSON.parse(UTF8.decode(data)) as ClaimRecord);
}

/** What the `turn_claims` bucket holds per session while a turn is claimed. */
interface ClaimRecord {
  turn_id: string;
  delivery: number;
  worker: string;
  /** The claiming process (process-presence.ts), asked by a later delivery that takes the turn over. */
  proc?: string;
  token: string;
}

export interface NatsTurnQueueOptions {
  js: JetStreamClient;
  /** Publishes with acks (enqueue, claim release); default `js`. */
  publisher?: Pick<AckedPublisher, 'publish'>;
  jsm: JetStreamManager;
  /** Leader gets (default `jsm.streams.getMessage`; the bus sends them again during an election, leader-get.ts). */
  getMessage?: LeaderGet;
  kv: KV;
  log: Logger;
  /** Confirms naks (confirmed-nak.ts); without it a nak is sent once, unconfirmed. */
  nc?: NatsConnection;
  /** How long a nak (claim release + nak) keeps retrying before the lease takes over, in ms (default 60000). */
  releaseRetryMs?: number;
  /**
   * True (once) for a session this process created, whose turns were never claimed as far as it
   * knows: its first claim puts the record at once instead of reading first.
   */
  takeNeverClaimed?: (sessionId: string) => boolean;
}

/**
 * The turn queue on the TURNS work-queue stream (topology.ts): the server refuses a second
 * message on `turn.<sid>` (→ SessionBusyError), the shared durable `workers` hands each
 * message to one puller, and an unacked message is redelivered after ack_wait (the lease;
 * `working()` renews it).
 *
 * JetStream alone does not fence a stale worker (one paused past ack_wait): its late ack
 * would still remove the message another worker is running. So every claim also writes
 * {turn_id, delivery, worker, token} to the `turn_claims` KV bucket with compare-and-set;
 * `isCurrent()` compares the token, and ack/nak first delete that record with compare-and-set
 * and do nothing more when it was replaced (the claim is not current).
 */
export function createNatsTurnQueue({
  js,
  jsm,
  getMessage = (stream, query) => jsm.streams.getMessage(stream, query),
  kv,
  log,
  publisher = js,
  nc,
  releaseRetryMs = 60_000,
  takeNeverClaimed,
}: NatsTurnQueueOptions): TurnQueue {
  let consumer: Promise<Consumer> | undefined;
  const presence = nc ? createProcessPresence(nc) : undefined;
  const workers = () => (consumer ??= js.consumers.get(TURN_STREAM, TURN_CONSUMER));
  // A claim record's release while its bucket has no leader, until the lease would redeliver anyway.
  const releasePolicy = { ...retryPolicies.leaderless, deadlineMs: releaseRetryMs };
  /**
   * The revision of the delete marker this process left when it released a session's claim:
   * the next claim of that session (usually its next turn, here) puts its record with
   * compare-and-set against it at once. A match proves nobody wrote since, so there is no
   * record to read; a mismatch falls back to reading it.
   */
  const released = new RecencyMap<string, number>({ max: MAX_REMEMBERED_RELEASES, idleMs: RELEASE_IDLE_MS });

  /**
   * The record put in one round trip when this process knows the revision it replaces: the
   * marker of its own release, or none at all for a session it created and never claimed (the
   * read would answer 404). Null when that guess was wrong (the compare-and-set decides).
   */
  async function putKnownRevision(sessionId: string, record: ClaimRecord): Promise<number | null> {
    let revision = released.get(sessionId);
    if (revision === undefined && takeNeverClaimed?.(sessionId)) revision = 0;
    if (revision === undefined) return null;
    released.delete(sessionId);
    try {
      return await kv.put(sessionId, JSON.stringify(record), { previousSeq: revision });
    } catch (err) {
      if (!isSequenceConflict(err)) throw err;
      return null;
    }
  }

  /**
   * `kv.delete` with compare-and-set that also returns the marker's revision (nats.js does not):
   * the same message, a `KV-Operation: DEL` header on the key's subject (ADR-8).
   */
  async function deleteClaim(sessionId: string, previousSeq: number): Promise<number> {
    const h = headers();
    h.set(KV_OPERATION_HEADER, 'DEL');
    const ack = await publisher.publish(claimSubject(sessionId), Empty, { headers: h, expect: { lastSubjectSequence: previousSeq } });
    return ack.seq;
  }

  /**
   * The session's claim record as the bucket's leader has it. `kv.get` is a direct get that any
   * replica may answer, and a lagging one does not have the claim just written: the turn then
   * stopped as a stale claim a moment after it was claimed (issue 13 item 5).
   */
  async function readClaim(sessionId: string): Promise<{ record: ClaimRecord | null; revision: number }> {
    const sm = await getMessage(CLAIM_STREAM, { last_by_subj: claimSubject(sessionId) });
    if (!sm) return { record: null, revision: 0 };
    return { record: claimOf(sm.data), revision: sm.seq };
  }

  /** Records this delivery as the session's current claim; null when a later delivery already owns the turn. */
  async function fence(m: JsMsg, workerId: string): Promise<TurnClaim | null> {
    const turn = m.json<TurnJob>();
    const record: ClaimRecord = {
      turn_id: turn.turn_id,
      delivery: m.info.deliveryCount,
      worker: workerId,
      token: randomUUID(),
      ...(presence ? { proc: presence.id } : {}),
    };
    const quick = await putKnownRevision(turn.session_id, record);
    if (quick !== null) return makeClaim(m, turn, record, quick, null);
    for (;;) {
      const { record: current, revision } = await readClaim(turn.session_id);
      if (current && current.turn_id === record.turn_id && current.delivery > record.delivery) {
        log.warn({ sessionId: turn.session_id, turnId: turn.turn_id, delivery: record.delivery }, 'stale delivery skipped');
        return null;
      }
      try {
        const rev = await kv.put(turn.session_id, JSON.stringify(record), { previousSeq: revision });
        // An earlier delivery of this turn whose record nobody released: its lease ran out.
        const replaced = current?.turn_id === record.turn_id ? current : null;
        return makeClaim(m, turn, record, rev, replaced);
      } catch (err) {
        if (!isSequenceConflict(err)) throw err; // a concurrent writer: read again and decide again
      }
    }
  }

  function makeClaim(m: JsMsg, turn: TurnJob, record: ClaimRecord, revision: number, replaced: ClaimRecord | null): TurnClaim {
    const isCurrent = async () => (await readClaim(turn.session_id)).record?.token === record.token;
    /**
     * Drops our record unless someone replaced it since (then it is theirs to keep). The
     * compare-and-set is the fence check of ack and nak: true means the claim was still ours.
     */
    const release = () =>
      deleteClaim(turn.session_id, revision).then(
        (marker) => {
          released.set(turn.session_id, marker);
          return true;
        },
        (err: unknown) => {
          if (!isSequenceConflict(err)) throw err;
          return false;
        },
      );
    /**
     * `release` through a leader change of the claims bucket: a failed delete is sent again.
     * A conflict after an attempt whose outcome is unknown is ours when the record is gone
     * (that attempt deleted it) and lost when someone else's record is there.
     */
    const releaseRetrying = async (): Promise<boolean> => {
      let unknownOutcome = false;
      const attempt = async () => {
        const ours = await release();
        if (ours || !unknownOutcome) return ours;
        return (await readClaim(turn.session_id)).record === null;
      };
      return retry(attempt, releasePolicy, {
        onRetry: ({ err }) => {
          unknownOutcome = true;
          log.warn({ err, sessionId: turn.session_id, turnId: turn.turn_id }, 'claim release failed; retrying');
        },
      });
    };
    const lost = (op: string) =>
      log.warn({ sessionId: turn.session_id, turnId: turn.turn_id, delivery: record.delivery, op }, 'claim lost');
    return {
      turn,
      deliveryCount: record.delivery,
      async heartbeat() {
        m.working();
      },
      async ack() {
        if (!(await release())) return lost('ack');
        await removeJob(m.seq);
        await m.ackAck();
      },
      async nak(delayMs = 0) {
        if (!nc) {
          if (!(await release())) return lost('nak');
          m.nak(Math.max(0, delayMs));
          return;
        }
        // The turn must be retried promptly even across a leader change (issue 13 item 2):
        // an unconfirmed nak lost with the consumer's leader would leave it to the lease.
        if (!(await releaseRetrying())) return lost('nak');
        if (!(await confirmedNak(nc, m, Math.max(0, delayMs), { giveUpAfterMs: releaseRetryMs }))) {
          log.warn({ sessionId: turn.session_id, turnId: turn.turn_id }, 'nak not confirmed; the lease redelivers the turn');
        }
      },
      isCurrent,
      predecessor: async () => (replaced?.proc && presence ? presence.check(replaced.proc) : 'gone'),
    };
  }

  /**
   * Deletes a finished job through the stream's own replicated log before the ack. A work-queue
   * ack removes the message on each replica on its own schedule (the consumer's log, not the
   * stream's), so a replica could still hold the job when it applies the session's next job and
   * refuse that one (one message per subject) while the leader stored it: the replicas then
   * number their messages differently, and the consumer, reading its own replica, never hands
   * out the new job (issue 13 item 1; nats-server 2.10 lets each replica apply the
   * per-subject limit itself). A delete is ordered before any later publish on every replica.
   */
  async function removeJob(seq: number): Promise<void> {
    try {
      await jsm.streams.deleteMessage(TURN_STREAM, seq, false);
    } catch (err) {
      // Purged (remove()), or deleted by the worker of an earlier delivery that released the claim just before ours.
      if (!isAlreadyDeleted(err)) throw err;
    }
  }

  async function queuedTurnId(sessionId: string): Promise<string | null> {
    return (await getMessage(TURN_STREAM, { last_by_subj: turnSubject(sessionId) }))?.json<TurnJob>().turn_id ?? null;
  }

  /** The ack of a stored (or deduplicated) job; null when this turn's job is queued already. */
  async function publishJob(turn: TurnJob, msgID: string): Promise<PubAck | null> {
    try {
      // "Only onto an empty subject" is checked by the stream leader before it proposes the job;
      // the per-subject limit alone is checked by each replica as it applies it (see removeJob),
      // and every refused retry after "busy" was then a proposal the replicas could judge apart.
      const expect = { lastSubjectSequence: 0 };
      return await publisher.publish(turnSubject(turn.session_id), JSON.stringify(turn), { msgID, expect });
    } catch (err) {
      if (!isSubjectFull(err) && !isSubjectTaken(err)) throw err;
      // The same turn still queued (after the dedup window, or under another attempt's id) is a retry too, not a second turn.
      if ((await queuedTurnId(turn.session_id)) !== turn.turn_id) throw new SessionBusyError({ cause: err });
      return null;
    }
  }

  /** One pull; an abort returns null at once and gives back a message that arrives later. */
  async function pull(expires: number, signal?: AbortSignal): Promise<JsMsg | null> {
    const next = (await workers()).next({ expires });
    if (!signal) return next;
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        resolve(null);
        next.then(
          (m) => m?.nak(),
          () => undefined,
        );
      };
      signal.addEventListener('abort', onAbort, { once: true });
      next.then(
        (m) => {
          signal.removeEventListener('abort', onAbort);
          resolve(m);
        },
        (err: unknown) => {
          signal.removeEventListener('abort', onAbort);
          reject(err);
        },
      );
    });
  }

  return {
    async enqueue(turn: TurnJob) {
      assertUuid(turn.turn_id);
      // msgID = turn_id: enqueueing the same turn again within the dedup window is a no-op.
      const ack = await publishJob(turn, turn.turn_id);
      if (!ack?.duplicate || ack.seq > 0) return;
      // A duplicate with seq 0 names a publish the stream never stored: on a replicated stream
      // the leader remembers a msg id before its proposal is applied, also when the apply then
      // refuses it (the session's previous job was still queued, the retry after "busy"). The
      // id stays taken for the dedup window, so the job goes out again under an id of its own
      // attempt. It is still queued at most once: the stream holds one job per session, and a
      // job of this turn found there is this one.
      if ((await queuedTurnId(turn.session_id)) === turn.turn_id) return;
      log.debug({ sessionId: turn.session_id, turnId: turn.turn_id }, 'turn job re-sent: its msg id was refused before');
      const again = await publishJob(turn, `${turn.turn_id}.${randomUUID()}`);
      if (again?.duplicate) throw new Error(`turn ${turn.turn_id}: a fresh msg id was reported as a duplicate`);
    },
    /** Waits at least 1 s when nothing is queued (the client's minimum pull expiry). */
    async claim(workerId: string, { waitMs = 1000, signal }: ClaimOptions = {}) {
      const deadline = Date.now() + waitMs;
      while (!signal?.aborted) {
        const m = await pull(Math.max(MIN_PULL_EXPIRES_MS, deadline - Date.now()), signal);
        if (!m) return null;
        const claim = await fence(m, workerId);
        if (claim) return claim;
        if (Date.now() >= deadline) return null;
      }
      return null;
    },
    queued: queuedTurnId,
    async remove(sessionId: string) {
      await jsm.streams.purge(TURN_STREAM, { filter: turnSubject(sessionId) });
      released.delete(sessionId);
      await kv.delete(sessionId);
    },
    async removeFinished(sessionId: string, turnId: string) {
      const sm = await getMessage(TURN_STREAM, { last_by_subj: turnSubject(sessionId) });
      if (!sm) return true;
      if (sm.json<TurnJob>().turn_id !== turnId) return false;
      // By sequence: a job of the next turn published meanwhile is another message and stays.
      await removeJob(sm.seq);
      return true;
    },
  };
}
