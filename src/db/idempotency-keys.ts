/**
 * The `idempotency_keys` table (migration 0014): the first request with a key claims its row
 * (`in_flight`), stores its outcome (`done`) or gives the row up; later requests with that key
 * read it. All times are the database's (`now()`), so instances with skewed clocks agree.
 * An `in_flight` row names the process running its request (`owner_process_id`): a retry takes
 * it over as soon as that process is dead (process-liveness.ts), never while it is alive.
 */
import { randomUUID } from 'node:crypto';
import { IdempotencyKeyInUseError } from '../errors.js';
import type { Logger } from '../log.js';
import type { ProcessLiveness } from './process-liveness.js';
import type { Store } from './store.js';

export interface IdempotencyKeysOptions {
  /** How long an outcome is replayed, in ms (default 24 h). */
  ttlMs: number;
  /**
   * An `in_flight` row that names no process (written before migration 0017, or given up by
   * `abandon`) older than this was abandoned, in ms (default 60000). A row naming a process is
   * taken over when that process is dead, however young the row.
   */
  staleInFlightMs: number;
  /** Expired rows are deleted this often, in ms (default 10 min). */
  purgeIntervalMs: number;
}

export function defaultIdempotencyKeysOptions(): IdempotencyKeysOptions {
  return { ttlMs: 24 * 60 * 60 * 1000, staleInFlightMs: 60_000, purgeIntervalMs: 10 * 60_000 };
}

export interface StoredOutcome {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export type IdempotencyBegin =
  /**
   * This request owns the key: run it, then `complete` or `abandon` with the claim. `reservation`:
   * what an earlier request with the key reserved before its side effect and never settled.
   */
  | { kind: 'new'; claim: string; reservation?: unknown }
  | { kind: 'replay'; outcome: StoredOutcome }
  /** The key was used for another request (method, path or body). */
  | { kind: 'mismatch' }
  /** The first request with this key is still running. */
  | { kind: 'in_flight' };

interface KeyRow {
  fingerprint: string;
  state: 'in_flight' | 'done';
  response_status: number | null;
  response_body: string | null;
  response_headers: string | null;
}

/** Creates the store; its purge timer starts at once and stops with `close()`. */
export function createIdempotencyKeys(
  { store, log, liveness }: { store: Store; log: Logger; liveness: Pick<ProcessLiveness, 'processId' | 'deadAfterMs' | 'ready'> },
  opts: Partial<IdempotencyKeysOptions> = {},
) {
  const o = { ...defaultIdempotencyKeysOptions(), ...opts };

  /**
   * Claims the key unless a live row holds it; an expired or abandoned one (same request) is
   * taken over. Abandoned: given up, or its process is dead (no heartbeat row, or a stale one),
   * or, for a row naming no process, older than `staleInFlightMs`. An abandoned one keeps its
   * reservation: its side effect may have happened.
   */
  async function claim(orgId: string, key: string, fingerprint: string): Promise<{ claim: string; reservation: string | null } | null> {
    // Our own heartbeat row exists before any row names this process, so a missing row means dead.
    await liveness.ready();
    const claimId = randomUUID();
    const rows = await store.sql<{ reservation: string | null }>(
      `insert into idempotency_keys (organization_id, key, fingerprint, claim_id, state, created_at, expires_at, owner_process_id)
       values (?, ?, ?, ?, 'in_flight', now(), now() + ? * interval '1 millisecond', ?)
       on conflict (organization_id, key) do update set
         fingerprint = excluded.fingerprint, claim_id = excluded.claim_id, state = 'in_flight', response_status = null,
         response_body = null, response_headers = null, created_at = excluded.created_at, expires_at = excluded.expires_at,
         owner_process_id = excluded.owner_process_id,
         reservation = case when idempotency_keys.expires_at < now() then null else idempotency_keys.reservation end
       where idempotency_keys.expires_at < now()
          or (idempotency_keys.state = 'in_flight' and idempotency_keys.fingerprint = excluded.fingerprint
              and case when idempotency_keys.owner_process_id is null
                    then idempotency_keys.created_at < now() - ? * interval '1 millisecond'
                    else not exists (select 1 from process_liveness p where p.process_id = idempotency_keys.owner_process_id
                                       and p.beat_at > now() - ? * interval '1 millisecond') end)
       returning reservation`,
      [orgId, key, fingerprint, claimId, o.ttlMs, liveness.processId, o.staleInFlightMs, liveness.deadAfterMs],
    );
    return rows[0] ? { claim: claimId, reservation: rows[0].reservation } : null;
  }

  async function begin(orgId: string, key: string, fingerprint: string): Promise<IdempotencyBegin> {
    // Twice at most: the row read below may be given up (abandoned) between the two statements.
    for (let attempt = 0; ; attempt++) {
      const claimed = await claim(orgId, key, fingerprint);
      if (claimed) {
        const { claim: claimId, reservation } = claimed;
        return reservation === null
          ? { kind: 'new', claim: claimId }
          : { kind: 'new', claim: claimId, reservation: JSON.parse(reservation) };
      }
      const [row] = await store.sql<KeyRow>(
        `select fingerprint, state, response_status, response_body, response_headers from idempotency_keys
         where organization_id = ? and key = ? and expires_at >= now()`,
        [orgId, key],
      );
      if (!row) {
        if (attempt < 2) continue;
        return { kind: 'in_flight' };
      }
      if (row.fingerprint !== fingerprint) return { kind: 'mismatch' };
      if (row.state === 'in_flight') return { kind: 'in_flight' };
      const outcome: StoredOutcome = {
        status: row.response_status!,
        body: row.response_body === null ? undefined : JSON.parse(row.response_body),
      };
      if (row.response_headers) outcome.headers = JSON.parse(row.response_headers) as Record<string, string>;
      return { kind: 'replay', outcome };
    }
  }

  async function complete(orgId: string, key: string, claimId: string, outcome: StoredOutcome): Promise<void> {
    await store.sql(
      `update idempotency_keys set state = 'done', response_status = ?, response_body = ?, response_headers = ?
       where organization_id = ? and key = ? and claim_id = ?`,
      [
        outcome.status,
        outcome.body === undefined ? null : JSON.stringify(outcome.body),
        outcome.headers ? JSON.stringify(outcome.headers) : null,
        orgId,
        key,
        claimId,
      ],
    );
  }

  /** Records, before the side effect, what the request is about to create (see IdempotencyBegin). */
  async function reserve(orgId: string, key: string, claimId: string, reservation: unknown): Promise<void> {
    const rows = await store.sql(
      `update idempotency_keys set reservation = ? where organization_id = ? and key = ? and claim_id = ? and state = 'in_flight'
       returning 1`,
      [JSON.stringify(reservation), orgId, key, claimId],
    );
    // Another request took the key over (this one outlived the stale limit) and may be creating
    // the same thing: this one stops before its side effect, and the client's retry gets that one's outcome.
    if (!rows.length) throw new IdempotencyKeyInUseError();
  }

  /**
   * Gives the key up (the request had no outcome worth replaying): the next request with it runs.
   * A row with a reservation is kept, marked abandoned at once, so that request finds what was reserved.
   */
  async function abandon(orgId: string, key: string, claimId: string): Promise<void> {
    await store.sql(
      `delete from idempotency_keys where organization_id = ? and key = ? and claim_id = ? and state = 'in_flight' and reservation is null`,
      [orgId, key, claimId],
    );
    await store.sql(
      `update idempotency_keys set created_at = '-infinity', owner_process_id = null
       where organization_id = ? and key = ? and claim_id = ? and state = 'in_flight'`,
      [orgId, key, claimId],
    );
  }

  async function purgeExpired(): Promise<number> {
    const [row] = await store.sql<{ n: number | string }>(
      `with gone as (delete from idempotency_keys where expires_at < now() returning 1) select count(*) as n from gone`,
    );
    return Number(row?.n ?? 0);
  }

  // The first purge at a random point of the interval: instances restarted together do not all
  // purge at once, and a start does no purge work.
  let timer: NodeJS.Timeout | null = setTimeout(
    function tick() {
      if (!timer) return;
      purgeExpired().then(
        (n) => n && log.info({ purged: n }, 'expired idempotency keys purged'),
        (err: unknown) => log.warn({ err }, 'purging expired idempotency keys failed'),
      );
      timer = setTimeout(tick, o.purgeIntervalMs).unref();
    },
    Math.floor(Math.random() * o.purgeIntervalMs),
  ).unref();

  return {
    begin,
    reserve,
    complete,
    abandon,
    purgeExpired,
    close(): void {
      if (timer) clearTimeout(timer);
      timer = null;
    },
  };
}

export type IdempotencyKeys = ReturnType<typeof createIdempotencyKeys>;
