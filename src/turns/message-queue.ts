/**
 * The session's queue of messages sent while a turn ran (migration 0023; decision 0097). Rows
 * move `queued` → `started` (their turn began; the worker says so) or `cancelled` (a user), by
 * conditional UPDATEs, so the API, workers and the sweeper can race without a lock. A row that
 * is no longer queued stays for a day as a tombstone: an Idempotency-Key retry finds it and
 * never queues the message again.
 */
import { type PreparedSql, preparedSql, type Store } from '../db/index.js';
import type { AcceptedMessage, MessageInput } from './turn-start.js';

export type QueuedState = 'queued' | 'started' | 'cancelled';
export type OnBusy = 'reject' | 'enqueue' | 'interrupt';

export interface QueuedRow {
  id: string;
  session_id: string;
  organization_id: string;
  user_id: string | null;
  priority: number;
  state: QueuedState;
  message: MessageInput;
  turn_id: string | null;
  accepted: AcceptedMessage | null;
  traceparent: string | null;
  created_at: string;
}

export interface NewQueued {
  id: string;
  sessionId: string;
  orgId: string;
  userId?: string;
  /** An interrupt's message runs before the queue's others. */
  interrupt: boolean;
  message: MessageInput;
  traceparent?: string;
}

/** How long a tombstone outlives its message: an Idempotency-Key's lifetime (src/http/idempotency.ts). */
const TOMBSTONE_HOURS = 24;
const COLUMNS = 'id, session_id, organization_id, user_id, priority, state, message, turn_id, accepted, traceparent, created_at';
/** A session's queued messages, in the order they will run. */
const LIST = `select ${COLUMNS} from queued_messages where session_id = ? and state = 'queued' order by priority, id`;
/** Every turn's end reads the head (queue-dispatch.ts `next`): prepared, with its parameter bound. */
const HEAD = preparedSql('queued-messages.head', `${LIST} limit 1`);

export function createMessageQueue(store: Store) {
  async function one(sql: string | PreparedSql, params: unknown[]): Promise<QueuedRow | null> {
    return (await store.sql<QueuedRow>(sql, params))[0] ?? null;
  }

  return {
    /**
     * Adds a message unless the session already holds `maxPerSession` queued ones: `full` (429).
     * A row with this id already there (a retried request) is `exists`. Concurrent adds may each
     * pass the count, like the organisation's turn cap.
     */
    async add(q: NewQueued, maxPerSession: number): Promise<{ outcome: 'added' | 'exists' | 'full'; position: number }> {
      const existing = await one(`select ${COLUMNS} from queued_messages where id = ? and session_id = ?`, [q.id, q.sessionId]);
      if (existing) return { outcome: 'exists', position: await this.position(existing) };
      await store.sql(
        `delete from queued_messages where session_id = ? and state <> 'queued' and updated_at < now() - (? * interval '1 hour')`,
        [q.sessionId, TOMBSTONE_HOURS],
      );
      const rows = await store.sql<{ id: string }>(
        `insert into queued_messages (id, session_id, organization_id, user_id, priority, message, traceparent)
         select ?::uuid, ?::uuid, ?::uuid, ?::uuid, ?::smallint, ?::jsonb, ?::text
         where (select count(*) from queued_messages where session_id = ? and state = 'queued') < ?
         on conflict (id) do nothing returning id`,
        [
          q.id,
          q.sessionId,
          q.orgId,
          q.userId ?? null,
          q.interrupt ? 0 : 1,
          JSON.stringify(q.message),
          q.traceparent ?? null,
          q.sessionId,
          maxPerSession,
        ],
      );
      if (!rows.length) {
        const raced = await one(`select ${COLUMNS} from queued_messages where id = ?`, [q.id]);
        return raced ? { outcome: 'exists', position: await this.position(raced) } : { outcome: 'full', position: 0 };
      }
      return { outcome: 'added', position: await this.position({ id: q.id, session_id: q.sessionId, priority: q.interrupt ? 0 : 1 }) };
    },
    /** 1-based place among the session's queued messages (0 once it left the queue). */
    async position(row: Pick<QueuedRow, 'id' | 'session_id' | 'priority'>): Promise<number> {
      const rows = await store.sql<{ n: unknown }>(
        `select count(*) as n from queued_messages where session_id = ? and state = 'queued' and (priority, id) <= (?::smallint, ?::uuid)`,
        [row.session_id, row.priority, row.id],
      );
      return Number(rows[0]?.n ?? 0);
    },
    get(sessionId: string, id: string): Promise<QueuedRow | null> {
      return one(`select ${COLUMNS} from queued_messages where id = ? and session_id = ?`, [id, sessionId]);
    },
    /** The session's queued messages, in the order they will run. */
    list(sessionId: string): Promise<QueuedRow[]> {
      return store.sql<QueuedRow>(LIST, [sessionId]);
    },
    head(sessionId: string): Promise<QueuedRow | null> {
      return one(HEAD, [sessionId]);
    },
    async countInSession(sessionId: string): Promise<number> {
      const rows = await store.sql<{ n: unknown }>(`select count(*) as n from queued_messages where session_id = ? and state = 'queued'`, [
        sessionId,
      ]);
      return Number(rows[0]?.n ?? 0);
    },
    /** Queued messages per session of `sessionIds` (a page of the session list), in one query; absent ids hold none. */
    async countsBySession(sessionIds: readonly string[]): Promise<Map<string, number>> {
      if (!sessionIds.length) return new Map();
      const rows = await store.sql<{ session_id: string; n: unknown }>(
        `select session_id, count(*) as n from queued_messages
         where session_id in (${sessionIds.map(() => '?::uuid').join(', ')}) and state = 'queued' group by session_id`,
        [...sessionIds],
      );
      return new Map(rows.map((r) => [r.session_id, Number(r.n)]));
    },
    async countInOrg(orgId: string): Promise<number> {
      const rows = await store.sql<{ n: unknown }>(
        `select count(*) as n from queued_messages where organization_id = ? and state = 'queued'`,
        [orgId],
      );
      return Number(rows[0]?.n ?? 0);
    },
    /** Gives the queued message a turn id, replacing `expected` (null: none yet); false when another dispatcher changed it first. */
    async assignTurn(id: string, expected: string | null, accepted: AcceptedMessage): Promise<boolean> {
      const rows = await store.sql(
        `update queued_messages set turn_id = ?::uuid, accepted = ?::jsonb, updated_at = now()
         where id = ? and state = 'queued' and turn_id is not distinct from ?::uuid returning id`,
        [accepted.turn_id, JSON.stringify(accepted), id, expected],
      );
      return rows.length > 0;
    },
    /** Its turn began (the worker, right after the session row's `begin`). */
    async markStarted(id: string, turnId: string): Promise<void> {
      await store.sql(
        `update queued_messages set state = 'started', updated_at = now() where id = ? and state = 'queued' and turn_id = ?::uuid`,
        [id, turnId],
      );
    },
    /** A user removes it; refused once a dispatcher handed it to the turn queue (its turn is starting). */
    async cancel(sessionId: string, id: string): Promise<boolean> {
      const rows = await store.sql(
        `update queued_messages set state = 'cancelled', updated_at = now()
         where id = ? and session_id = ? and state = 'queued' and turn_id is null returning id`,
        [id, sessionId],
      );
      return rows.length > 0;
    },
  };
}

export type MessageQueue = ReturnType<typeof createMessageQueue>;
