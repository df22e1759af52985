import { randomUUID } from 'node:crypto';
import { InvalidRequestError, SessionBusyError } from '../../errors.js';
import { isAnyUuid } from '../../ids.js';
import type { Logger } from '../../log.js';
import { preparedSql, type Store } from '../../db/index.js';
import type { ClaimOptions, TurnClaim, TurnJob, TurnQueue } from '../ports.js';
import { soleClientState } from './sole-client.js';

export interface SqlTurnQueueOptions {
  store: Store;
  log: Logger;
  /** How long a claim lasts without a heartbeat before the turn is redelivered, in ms. */
  leaseMs: number;
  /** Idle claimers re-check the table this often (other processes, expired leases), in ms. */
  pollMs: number;
  /**
   * This process is the store's only client (PGlite): every claim token is set and cleared by
   * it, so `isCurrent` compares with the token it remembers instead of reading the row.
   */
  soleClient?: boolean;
}

interface ClaimedRow {
  session_id: string;
  turn_id: string;
  job: Record<string, unknown>;
  delivery_count: number;
}

// Every turn runs these three: prepared, they are planned once and take their parameters bound
// (the job's JSON included) on both databases (issue 34).
const CLAIM = preparedSql(
  'bus-turns.claim',
  `update bus_turns set claimed_by = ?, claim_token = ?, delivery_count = delivery_count + 1,
     claim_expires_at = now() + (?::int * interval '1 millisecond')
   where session_id = (
     select session_id from bus_turns
     where available_at <= now() and (claim_token is null or claim_expires_at <= now())
     order by available_at, created_at limit 1
     for update skip locked)
   returning session_id, turn_id, job, delivery_count`,
);
/** The rows a claim still holds: its session's, while its token is the current one. */
const MINE = 'where session_id = ? and claim_token = ?';
const ACK = preparedSql('bus-turns.ack', `delete from bus_turns ${MINE}`);
const ENQUEUE = preparedSql(
  'bus-turns.enqueue',
  `insert into bus_turns (session_id, turn_id, job, available_at) values (?, ?, ?, now())
   on conflict (session_id) do nothing returning turn_id`,
);

/**
 * The turn queue on the `bus_turns` table: one row per session (the primary key is the
 * "one turn per session" rule). A claim sets a random claim token and a lease expiry in one
 * UPDATE whose row comes from `FOR UPDATE SKIP LOCKED`, so concurrent claimers, in this
 * process or another one on the same PostgreSQL, never get the same row. A lease that runs
 * out makes the row claimable again (redelivery); the new claim replaces the token, which is
 * what fences the stale worker: every later call of the old claim matches no row.
 * All times are the database's `now()`, so processes with skewed clocks agree on leases.
 */
export function createSqlTurnQueue({ store, log, leaseMs, pollMs, soleClient = false }: SqlTurnQueueOptions): TurnQueue {
  // session id → the token `bus_turns.claim_token` holds, for a sole client (shared by the store's buses).
  const claims = soleClient ? soleClientState(store).claims : undefined;
  // Wakes claimers in this process as soon as a turn is enqueued or given back: one waiter per
  // turn, longest waiting first. Waking them all sent every idle claimer's UPDATE for a row only
  // one of them could take (0.3 extra statements per turn at K=10 on the real path).
  const waiters = new Set<() => void>();
  const wakeOne = () => {
    for (const wake of waiters) {
      waiters.delete(wake);
      wake();
      return;
    }
  };

  async function claimOnce(workerId: string): Promise<TurnClaim | null> {
    const token = randomUUID();
    const rows = await store.sql<ClaimedRow>(CLAIM, [workerId, token, leaseMs]);
    const row = rows[0];
    if (!row) return null;
    // The row's token is this one from the statement's commit on: an older claim is fenced.
    claims?.set(row.session_id, token);
    return makeClaim(row, token);
  }

  function makeClaim(row: ClaimedRow, token: string): TurnClaim {
    const key = [row.session_id, token];
    // Forgotten before the statement: a failed one may have committed, and "not current" is the safe answer.
    const forget = () => {
      if (claims?.get(row.session_id) === token) claims.delete(row.session_id);
    };
    return {
      turn: { session_id: row.session_id, turn_id: row.turn_id, job: row.job },
      deliveryCount: row.delivery_count,
      async heartbeat() {
        await store.sql(`update bus_turns set claim_expires_at = now() + (?::int * interval '1 millisecond') ${MINE}`, [leaseMs, ...key]);
      },
      async ack() {
        forget();
        await store.sql(ACK, key);
      },
      async nak(delayMs = 0) {
        forget();
        await store.sql(
          `update bus_turns set claim_token = null, claimed_by = null, claim_expires_at = null,
             available_at = now() + (?::int * interval '1 millisecond') ${MINE}`,
          [Math.max(0, Math.round(delayMs)), ...key],
        );
        if (delayMs <= 0) wakeOne();
      },
      async isCurrent() {
        if (claims) return claims.get(row.session_id) === token;
        return (await store.sql(`select 1 from bus_turns ${MINE}`, key)).length > 0;
      },
    };
  }

  /**
   * Resolves after `ms`, on a local wake-up, or on abort, whichever comes first; true when woken.
   * A waiter that leaves (timeout, abort) is no longer in `waiters`, so no wake-up goes to it.
   */
  function idle(ms: number, signal?: AbortSignal): Promise<boolean> {
    return new Promise((resolve) => {
      const done = (woken: boolean) => {
        waiters.delete(wake);
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        resolve(woken);
      };
      const wake = () => done(true);
      const onAbort = () => done(false);
      const timer = setTimeout(onAbort, ms);
      if (signal?.aborted) return done(false);
      signal?.addEventListener('abort', onAbort, { once: true });
      waiters.add(wake);
    });
  }

  /** The session's queued or running turn id (lower case), or null. */
  async function queued(sessionId: string): Promise<string | null> {
    assertUuid(sessionId);
    const rows = await store.sql<{ turn_id: string }>('select turn_id from bus_turns where session_id = ?', [sessionId]);
    return rows[0]?.turn_id.toLowerCase() ?? null;
  }

  return {
    async enqueue(turn: TurnJob) {
      assertUuid(turn.session_id);
      assertUuid(turn.turn_id);
      const inserted = await store.sql(ENQUEUE, [turn.session_id, turn.turn_id, JSON.stringify(turn.job ?? {})]);
      if (inserted.length === 0) {
        const rows = await store.sql<{ turn_id: string }>('select turn_id from bus_turns where session_id = ?', [turn.session_id]);
        // Enqueueing the same turn again is a retry, not a second turn.
        if (rows[0]?.turn_id.toLowerCase() !== turn.turn_id.toLowerCase()) throw new SessionBusyError();
        return;
      }
      wakeOne();
    },
    async claim(workerId: string, { waitMs = 1000, signal }: ClaimOptions = {}) {
      const deadline = Date.now() + waitMs;
      for (;;) {
        if (signal?.aborted) return null;
        const claim = await claimOnce(workerId);
        if (claim) {
          log.debug(
            { sessionId: claim.turn.session_id, turnId: claim.turn.turn_id, workerId, delivery: claim.deliveryCount },
            'turn claimed',
          );
          return claim;
        }
        const left = deadline - Date.now();
        if (left <= 0) return null;
        const woken = await idle(Math.min(left, pollMs), signal);
        // Woken for a turn it will not claim: the wake-up goes to the next waiter.
        if (woken && signal?.aborted) {
          wakeOne();
          return null;
        }
      }
    },
    async remove(sessionId: string) {
      assertUuid(sessionId);
      claims?.delete(sessionId);
      await store.sql('delete from bus_turns where session_id = ?', [sessionId]);
    },
    queued,
    async removeFinished(sessionId: string, turnId: string) {
      assertUuid(turnId);
      const queuedId = await queued(sessionId);
      if (queuedId === null) return true;
      if (queuedId !== turnId.toLowerCase()) return false;
      claims?.delete(sessionId);
      await store.sql('delete from bus_turns where session_id = ? and turn_id = ?', [sessionId, queuedId]);
      return true;
    },
  };
}

function assertUuid(value: string): void {
  if (!isAnyUuid(value)) throw new InvalidRequestError(`Invalid id: ${value}`);
}
