import { randomUUID } from 'node:crypto';
import { iso, num, type StorageDb } from './sql.js';

/** A due schedule claimed by one scheduler instance until `finish`, `postpone` or lease expiry. */
export interface ScheduleClaim {
  id: string;
  session_id: string;
  organization_id: string;
  name: string;
  message: string;
  kind: 'once' | 'cron';
  cron_expression: string | null;
  timezone: string;
  /** The run being fired (the stored `next_run_at`). */
  run_at: string;
  /** Firings completed before this one; with `id` it names this firing uniquely. */
  fire_count: number;
  /** Records the firing: `next` is the following run (cron) or null (done). False when the claim was lost. */
  finish(next: Date | null): Promise<boolean>;
  /** Gives the claim back; nobody fires it again for `delayMs` (a busy session). False when the claim was lost. */
  postpone(delayMs: number): Promise<boolean>;
}

interface ClaimRow {
  id: string;
  session_id: string;
  organization_id: string;
  name: string;
  message: string;
  kind: 'once' | 'cron';
  cron_expression: string | null;
  timezone: string;
  next_run_at: unknown;
  fire_count: unknown;
}

/**
 * Claiming of due schedules across instances. A claim is one UPDATE whose row comes from
 * `FOR UPDATE SKIP LOCKED`: concurrent claimers (any process on the same database) never get the
 * same row. The claim token fences every later write, so a claimer whose lease ran out cannot
 * record a firing another instance has taken over. Times are the database's `now()`.
 */
export function createScheduleQueue(db: StorageDb) {
  async function claimDue(claimer: string, leaseMs: number): Promise<ScheduleClaim | null> {
    const token = randomUUID();
    const [row] = await db.sql<ClaimRow>(
      `update session_schedules set claimed_by = ?, claim_token = ?, claim_expires_at = now() + (?::int * interval '1 millisecond')
       where id = (
         select id from session_schedules
         where status = 'active' and next_run_at <= now() and (available_at is null or available_at <= now())
           and (claim_token is null or claim_expires_at <= now())
         order by next_run_at limit 1
         for update skip locked)
       returning id, session_id, organization_id, name, message, kind, cron_expression, timezone, next_run_at, fire_count`,
      [claimer, token, Math.round(leaseMs)],
    );
    if (!row) return null;
    const mine = 'where id = ? and claim_token = ?';
    return {
      id: row.id,
      session_id: row.session_id,
      organization_id: row.organization_id,
      name: row.name,
      message: row.message,
      kind: row.kind,
      cron_expression: row.cron_expression,
      timezone: row.timezone,
      run_at: iso(row.next_run_at),
      fire_count: num(row.fire_count),
      async finish(next) {
        const status = next ? 'active' : 'completed';
        const done = await db.sql(
          `update session_schedules set status = ?, next_run_at = ?, last_run_at = now(), fire_count = fire_count + 1,
             claimed_by = null, claim_token = null, claim_expires_at = null, available_at = null, updated_at = now() ${mine} returning id`,
          [status, next, row.id, token],
        );
        return done.length === 1;
      },
      async postpone(delayMs) {
        const done = await db.sql(
          `update session_schedules set claimed_by = null, claim_token = null, claim_expires_at = null,
             available_at = now() + (?::int * interval '1 millisecond'), updated_at = now() ${mine} returning id`,
          [Math.max(0, Math.round(delayMs)), row.id, token],
        );
        return done.length === 1;
      },
    };
  }

  /** The earliest moment any active schedule may be due (for the poller's sleep), or null. */
  async function nextDueAt(): Promise<Date | null> {
    const [row] = await db.sql<{ at: unknown }>(
      `select min(greatest(next_run_at, coalesce(available_at, next_run_at))) as at from session_schedules where status = 'active'`,
    );
    return row?.at ? new Date(iso(row.at)) : null;
  }

  return { claimDue, nextDueAt };
}

export type ScheduleQueue = ReturnType<typeof createScheduleQueue>;
