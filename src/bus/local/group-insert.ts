import { preparedSql, type Store } from '../../db/index.js';
import type { EventTail } from '../session-event.js';
import type { LoggedEvent } from '../ports.js';

/** One session's batch, numbered after the stored tail if its first id is above the tail's and the tail is `expected`. */
export interface TailInsert {
  sessionId: string;
  fresh: LoggedEvent[];
  expected: number | undefined;
  /**
   * The batch was looked up and none of it is stored: its ids need not be above the tail's. Ids
   * a start job carries were minted when its turn was accepted, and another writer may have
   * appended since; the unique id still stores each event once.
   */
  anyOrder: boolean;
}

/** The tail the statement saw and whether it inserted; null = a concurrent writer took the sequence (retry). */
export type TailInsertOutcome = { tail: EventTail; inserted: boolean } | null;

export interface GroupInsertOptions {
  store: Store;
  /** The single-session statement, with the exact conflict handling; used alone and as the fallback. */
  insertOne: (insert: TailInsert) => Promise<TailInsertOutcome>;
  /** Events per grouped statement (default 1000). */
  maxEvents?: number;
}

interface Pending {
  insert: TailInsert;
  resolve: (outcome: TailInsertOutcome) => void;
  reject: (err: unknown) => void;
}

/**
 * Group commit across sessions: one statement in flight at a time, and the appends of every
 * session that arrive meanwhile go out together in the next one, so they share one INSERT and
 * one commit (one fsync) instead of one each. The caller's per-session chain guarantees at most
 * one pending insert per session, so a statement never holds two batches of one session. A
 * grouped statement that fails (a unique violation from another process, an id taken) is
 * retried session by session with `insertOne`, which knows how to classify the error.
 */
export function createGroupInsert({ store, insertOne, maxEvents = 1000 }: GroupInsertOptions) {
  let queue: Pending[] = [];
  let running = false;

  async function run(): Promise<void> {
    running = true;
    try {
      while (queue.length > 0) {
        const batch = takeBatch();
        if (batch.length === 1) await settle(batch[0]!);
        else await insertGroup(batch);
      }
    } finally {
      running = false;
    }
  }

  function takeBatch(): Pending[] {
    let events = 0;
    let n = 0;
    while (n < queue.length && (n === 0 || events + queue[n]!.insert.fresh.length <= maxEvents)) events += queue[n++]!.insert.fresh.length;
    const batch = queue.slice(0, n);
    queue = queue.slice(n);
    return batch;
  }

  async function settle(p: Pending): Promise<void> {
    try {
      p.resolve(await insertOne(p.insert));
    } catch (err) {
      p.reject(err);
    }
  }

  async function insertGroup(batch: Pending[]): Promise<void> {
    let rows: { k: number; tail_sequence: number; tail_id: string | null; inserted: number }[];
    try {
      rows = await store.sql(GROUP_INSERT, groupParams(batch));
    } catch {
      // Whatever failed the whole statement, each session's own statement classifies it.
      await Promise.all(batch.map(settle));
      return;
    }
    for (const r of rows)
      batch[r.k]!.resolve({ tail: { sequence: r.tail_sequence, id: r.tail_id ?? undefined }, inserted: r.inserted > 0 });
  }

  return {
    insert(insert: TailInsert): Promise<TailInsertOutcome> {
      return new Promise((resolve, reject) => {
        queue.push({ insert, resolve, reject });
        if (!running) void run();
      });
    },
  };
}

/**
 * The single-session statement of sql-event-log.ts, for many sessions: each its tail, its checks,
 * its count. Requests and events come as two JSON arrays, so the text is one whatever the batch
 * and stays prepared (prepared-sql.ts).
 */
const GROUP_INSERT = preparedSql(
  'bus-events.group-insert',
  `with req as (select * from jsonb_to_recordset(?::jsonb) as r(k int, sid uuid, first_id uuid, expect int, any_order boolean)),
    v as (select * from jsonb_to_recordset(?::jsonb) as e(k int, n int, body jsonb)),
    base as (
      select req.k, req.sid, coalesce(t.sequence, 0) as seq, t.id as tail_id,
        (req.any_order or t.id is null or t.id < req.first_id) and (req.expect is null or coalesce(t.sequence, 0) = req.expect) as ok
      from req left join lateral (
        select sequence, id from bus_events where session_id = req.sid order by sequence desc limit 1) t on true),
    ins as (
      insert into bus_events (session_id, sequence, id, body)
      select base.sid, base.seq + v.n, (v.body ->> 'id')::uuid, jsonb_set(v.body, '{sequence}', to_jsonb(base.seq + v.n))
      from base join v on v.k = base.k
      where base.ok
      returning session_id),
    counted as (select session_id, count(*)::int as inserted from ins group by session_id)
    select base.k, base.seq as tail_sequence, base.tail_id, coalesce(counted.inserted, 0) as inserted
    from base left join counted on counted.session_id = base.sid`,
);

function groupParams(batch: Pending[]): unknown[] {
  const requests = batch.map((p, k) => ({
    k,
    sid: p.insert.sessionId,
    first_id: p.insert.fresh[0]!.id,
    expect: p.insert.expected ?? null,
    any_order: p.insert.anyOrder,
  }));
  const values = batch.flatMap((p, k) => p.insert.fresh.map((body, i) => ({ k, n: i + 1, body })));
  return [JSON.stringify(requests), JSON.stringify(values)];
}
