/**
 * The session row's turn fields (`status`, `current_turn_id`, `usage`,
 * `cancel_requested_turn_id`) are changed only here, by conditional UPDATEs, so the API and
 * any number of workers can race without a lock:
 *
 * - `current_turn_id` is the latest turn ever started and is never cleared. Turn ids are
 *   UUIDv7, so "a newer turn" is `current_turn_id < :turn`, and a late duplicate of an old
 *   transition matches no row.
 * - Every transition names the turn it is about; one for another turn is a no-op.
 * - Usage is written as the value folded from the log, never incremented, so retries are idempotent.
 * - `begun_turn_id` is the latest turn whose worker began writing its log (`begin`): the one
 *   writer of a turn's events asks the row first. A turn in `void_turn_ids` never begins: its
 *   start request was answered with an error (`voidTurn`), and the row decides, once, whether
 *   that answer or the turn's worker won. A cancel that comes before the turn began leaves its
 *   events to the worker (`requestCancel` says which).
 */
import { preparedSql, type PreparedSql, type Store } from '../db/index.js';
import type { Usage } from './turn-events.js';

export type TurnSessionStatus = 'started' | 'idle' | 'active' | 'waiting_for_tool_results';

export interface SessionTurnRow {
  id: string;
  organization_id: string;
  /** The creator (ownership: members reach only their own sessions). */
  user_id: string;
  status: TurnSessionStatus;
  current_turn_id: string | null;
  cancel_requested_turn_id: string | null;
}

/** Every turn runs some of these: prepared on each connection (prepared-sql.ts). */
const READ = preparedSql(
  'session-status.read',
  'select id, organization_id, user_id, status, current_turn_id, cancel_requested_turn_id from sessions where id = ?',
);
const MARK_ACTIVE = preparedSql(
  'session-status.mark-active',
  `update sessions set status = 'active', current_turn_id = ?::uuid, updated_at = now()
   where id = ? and (current_turn_id is null or current_turn_id < ?::uuid) and not (?::uuid = any(void_turn_ids)) returning id`,
);
/** Keeps the newest 16 void turn ids (migration 0018); refused once the turn (or a newer one) began. */
const VOID_TURN = preparedSql(
  'session-status.void-turn',
  `update sessions set void_turn_ids = (array_append(void_turn_ids, ?::uuid))[greatest(1, cardinality(void_turn_ids) - 14):]
   where id = ? and (begun_turn_id is null or begun_turn_id < ?::uuid) returning id`,
);
/**
 * The worker begins a turn (migration 0021): refused for a void turn. Shows the session active
 * when the API's markActive is not in yet (its process died after the enqueue), and says
 * whether this was the first beginning and whether a cancel was requested before it.
 */
const BEGIN = preparedSql(
  'session-status.begin',
  `update sessions s set begun_turn_id = ?::uuid,
     status = case when s.current_turn_id is null or s.current_turn_id < ?::uuid then 'active' else s.status end,
     current_turn_id = greatest(s.current_turn_id, ?::uuid), updated_at = now()
   from (select id, begun_turn_id from sessions where id = ? for update) prev
   where s.id = prev.id and not (?::uuid = any(s.void_turn_ids)) and (s.begun_turn_id is null or s.begun_turn_id <= ?::uuid)
   returning prev.begun_turn_id is distinct from ?::uuid as first, s.cancel_requested_turn_id = ?::uuid as cancel_requested`,
);
/**
 * A start whose job is gone before any worker began it (the queue lost it): voided, so a late
 * copy never runs, and the session idle again; refused once the turn began.
 */
const ABANDON_UNBEGUN = preparedSql(
  'session-status.abandon-unbegun',
  `update sessions set void_turn_ids = (array_append(void_turn_ids, ?::uuid))[greatest(1, cardinality(void_turn_ids) - 14):],
     status = 'idle', updated_at = now()
   where id = ? and current_turn_id = ?::uuid and status in ('active', 'waiting_for_tool_results')
     and (begun_turn_id is null or begun_turn_id < ?::uuid) returning id`,
);
const IS_VOID = preparedSql('session-status.is-void', `select 1 as void from sessions where id = ? and ?::uuid = any(void_turn_ids)`);
const MARK_IDLE = preparedSql(
  'session-status.mark-idle',
  `update sessions set status = 'idle', usage = ?::jsonb, current_turn_id = ?::uuid, updated_at = now()
   where id = ? and (current_turn_id is null or current_turn_id <= ?::uuid)
     and (cancel_requested_turn_id is distinct from ?::uuid or ?::boolean) returning id`,
);
const MARK_WAITING = preparedSql(
  'session-status.mark-waiting',
  `update sessions set status = 'waiting_for_tool_results', current_turn_id = ?::uuid, updated_at = now()
   where id = ? and (current_turn_id is null or current_turn_id < ?::uuid or (current_turn_id = ?::uuid and status = 'active'))
     and cancel_requested_turn_id is distinct from ?::uuid returning id`,
);
const MARK_RESUMED = preparedSql(
  'session-status.mark-resumed',
  `update sessions set status = 'active', updated_at = now()
   where id = ? and current_turn_id = ?::uuid and status = 'waiting_for_tool_results' returning id`,
);
const REQUEST_CANCEL = preparedSql(
  'session-status.request-cancel',
  `update sessions set cancel_requested_turn_id = ?::uuid, status = 'active', updated_at = now()
   where id = ? and current_turn_id = ?::uuid and status in ('active', 'waiting_for_tool_results')
     and cancel_requested_turn_id is distinct from ?::uuid returning begun_turn_id = ?::uuid as begun`,
);

/**
 * READ plus the organisation's turns in flight (its busy sessions, on the partial index of
 * migration 0019), for a request about to start a turn: one statement, not two.
 */
const READ_WITH_BUSY_IN_ORG = preparedSql(
  'session-status.read-with-busy-in-org',
  `select s.id, s.organization_id, s.user_id, s.status, s.current_turn_id, s.cancel_requested_turn_id,
     (select count(*) from sessions b where b.organization_id = s.organization_id
        and b.status in ('active', 'waiting_for_tool_results')) as busy_in_org
   from sessions s where s.id = ?`,
);

export function createSessionStatus(store: Store) {
  async function changed(transition: PreparedSql, params: unknown[]): Promise<boolean> {
    return (await store.sql<{ id: string }>(transition, params)).length > 0;
  }

  return {
    async read(sessionId: string): Promise<SessionTurnRow | null> {
      return (await store.sql<SessionTurnRow>(READ, [sessionId]))[0] ?? null;
    },
    /** The row and how many of the organisation's sessions run or wait on a turn. */
    async readWithBusyInOrg(sessionId: string): Promise<(SessionTurnRow & { busyInOrg: number }) | null> {
      const row = (await store.sql<SessionTurnRow & { busy_in_org: unknown }>(READ_WITH_BUSY_IN_ORG, [sessionId]))[0];
      if (!row) return null;
      const { busy_in_org, ...turnRow } = row;
      return { ...turnRow, busyInOrg: Number(busy_in_org) };
    },
    /** idle/started → active for a turn newer than the current one (the API, once the turn is queued). */
    markActive(sessionId: string, turnId: string): Promise<boolean> {
      return changed(MARK_ACTIVE, [turnId, sessionId, turnId, turnId]);
    },
    /**
     * The start request of `turnId` is answered with an error: true when the turn can now never
     * become active (its job, should it still arrive, is dropped); false when it already did, so
     * the request was accepted after all.
     */
    voidTurn(sessionId: string, turnId: string): Promise<boolean> {
      return changed(VOID_TURN, [turnId, sessionId, turnId]);
    },
    /** The turn's job is gone and no worker began it: true when the session is idle again (its message never reached the log). */
    abandonUnbegun(sessionId: string, turnId: string): Promise<boolean> {
      return changed(ABANDON_UNBEGUN, [turnId, sessionId, turnId, turnId]);
    },
    async isVoid(sessionId: string, turnId: string): Promise<boolean> {
      return (await store.sql(IS_VOID, [sessionId, turnId])).length > 0;
    },
    /**
     * The worker is about to write the turn's first events: null when the turn is void (drop
     * it). `first`: no attempt began it before; `cancelRequested`: a cancel is pending for it.
     */
    async begin(sessionId: string, turnId: string): Promise<{ first: boolean; cancelRequested: boolean } | null> {
      const params = [turnId, turnId, turnId, sessionId, turnId, turnId, turnId, turnId];
      const rows = await store.sql<{ first: boolean; cancel_requested: boolean | null }>(BEGIN, params);
      const row = rows[0];
      return row ? { first: row.first, cancelRequested: row.cancel_requested === true } : null;
    },
    /**
     * → waiting_for_tool_results (the worker suspends for client tools). Also when the API's
     * markActive for this turn has not landed yet: that late update then finds a turn that is not newer.
     */
    markWaiting(sessionId: string, turnId: string): Promise<boolean> {
      return changed(MARK_WAITING, [turnId, sessionId, turnId, turnId, turnId]);
    },
    /** waiting_for_tool_results → active (the API got the last missing client result). */
    markResumed(sessionId: string, turnId: string): Promise<boolean> {
      return changed(MARK_RESUMED, [sessionId, turnId]);
    },
    /**
     * active → idle with the session's cumulative usage. Refused while a cancel request for the
     * turn is pending and not yet handled (`cancelHandled` false), so an accepted cancel is never lost.
     */
    markIdle(sessionId: string, turnId: string, usage: Usage, cancelHandled: boolean): Promise<boolean> {
      // `current_turn_id < turn`: the API's markActive has not landed yet; taking the turn id here
      // makes that late update a no-op instead of leaving the session active for good.
      return changed(MARK_IDLE, [JSON.stringify(usage), turnId, sessionId, turnId, turnId, cancelHandled]);
    },
    /**
     * Records a cancel request for the running turn; null unless this request is the one that
     * wins. `begun`: the turn's worker began its log, so the API appends the cancel's events;
     * otherwise the worker appends them when it begins. A session waiting for client tool
     * results goes back to `active` (no more results accepted).
     */
    async requestCancel(sessionId: string, turnId: string): Promise<{ begun: boolean } | null> {
      const rows = await store.sql<{ begun: boolean | null }>(REQUEST_CANCEL, [turnId, sessionId, turnId, turnId, turnId]);
      return rows[0] ? { begun: rows[0].begun === true } : null;
    },
  };
}

export type SessionStatusStore = ReturnType<typeof createSessionStatus>;
