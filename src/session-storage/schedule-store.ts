import type { CreateScheduleInput, ScheduleInfo, SessionSchedules } from '../capabilities/index.js';
import { ConflictError, NotFoundError, QuotaExceededError } from '../errors.js';
import { isAnyUuid, newId } from '../ids.js';
import { inTransaction, iso, isoOrNull, lockKey, type StorageDb } from './sql.js';

/** Schedule rows per session, finished and cancelled ones included (config SESSION_MAX_SCHEDULES). */
export const DEFAULT_MAX_SCHEDULES = 500;

export interface SessionSchedulesScope {
  sessionId: string;
  orgId: string;
  /** Most schedule rows the session keeps in any status (the active limit is the tool's). */
  maxSchedules: number;
}

export interface ScheduleRow {
  id: string;
  name: string;
  message: string;
  kind: 'once' | 'cron';
  scheduled_at: unknown;
  cron_expression: string | null;
  timezone: string;
  status: 'active' | 'completed' | 'cancelled';
  next_run_at: unknown;
  last_run_at: unknown;
  created_at: unknown;
}

export const SCHEDULE_COLUMNS =
  'id, name, message, kind, scheduled_at, cron_expression, timezone, status, next_run_at, last_run_at, created_at';

export function toScheduleInfo(r: ScheduleRow): ScheduleInfo {
  return {
    id: r.id,
    name: r.name,
    message: r.message,
    kind: r.kind,
    scheduled_at: isoOrNull(r.scheduled_at),
    cron_expression: r.cron_expression,
    timezone: r.timezone,
    status: r.status,
    next_run_at: isoOrNull(r.next_run_at),
    last_run_at: isoOrNull(r.last_run_at),
    created_at: iso(r.created_at),
  };
}

/**
 * One session's schedules on `session_schedules` (the `SessionSchedules` port). Creation holds
 * the session's schedule lock, so the active limit holds under concurrent calls. Firing is the
 * scheduler's job (`schedule-queue.ts`, `actors/scheduler/scheduler.ts`).
 */
export function createSessionSchedules(db: StorageDb, { sessionId, orgId, maxSchedules }: SessionSchedulesScope): SessionSchedules {
  return {
    create: (input: CreateScheduleInput) =>
      inTransaction(db, async (q) => {
        await lockKey(q, `schedules:${sessionId}`);
        const [count] = await q<{ n: unknown; total: unknown }>(
          `select count(*) filter (where status = 'active') as n, count(*) as total from session_schedules where session_id = ?`,
          [sessionId],
        );
        const active = Number(count?.n ?? 0);
        if (Number(count?.total ?? 0) >= maxSchedules) {
          throw new QuotaExceededError(
            'count',
            `Schedule quota reached: a session keeps at most ${maxSchedules} schedules, finished and cancelled ones included`,
          );
        }
        if (active >= input.max_active)
          throw new ConflictError(`${active} schedules are already active (maximum ${input.max_active}). Cancel one first.`);
        const [row] = await q<ScheduleRow>(
          `insert into session_schedules (id, session_id, organization_id, name, message, kind, scheduled_at, cron_expression, timezone, status, next_run_at, created_at, updated_at)
           values (?, ?, ?, ?, ?, ?, ?, ?, ?, 'active', ?, now(), now()) returning ${SCHEDULE_COLUMNS}`,
          [
            newId(),
            sessionId,
            orgId,
            input.name,
            input.message,
            input.kind,
            input.scheduled_at,
            input.cron_expression,
            input.timezone,
            input.next_run_at,
          ],
        );
        return toScheduleInfo(row!);
      }),

    async cancel(id) {
      if (!isAnyUuid(id)) throw new NotFoundError(`No such schedule: ${id}`);
      const [row] = await db.sql<ScheduleRow>(
        `update session_schedules set status = 'cancelled', next_run_at = null, updated_at = now()
         where session_id = ? and id = ? and status = 'active' returning ${SCHEDULE_COLUMNS}`,
        [sessionId, id],
      );
      if (row) return toScheduleInfo(row);
      const [existing] = await db.sql<{ status: string }>('select status from session_schedules where session_id = ? and id = ?', [
        sessionId,
        id,
      ]);
      if (!existing) throw new NotFoundError(`No such schedule: ${id}`);
      throw new ConflictError(`Schedule ${id} is not active (it is ${existing.status})`);
    },

    async list({ include_inactive = false } = {}) {
      const rows = include_inactive
        ? await db.sql<ScheduleRow>(`select ${SCHEDULE_COLUMNS} from session_schedules where session_id = ? order by created_at, id`, [
            sessionId,
          ])
        : await db.sql<ScheduleRow>(
            `select ${SCHEDULE_COLUMNS} from session_schedules where session_id = ? and status = 'active' order by next_run_at, id`,
            [sessionId],
          );
      return rows.map(toScheduleInfo);
    },
  };
}
