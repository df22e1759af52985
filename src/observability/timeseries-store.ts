/**
 * Distributed mode: every instance writes its task counts to PostgreSQL every `flushMs`
 * (migration 0015: `service_instances` heartbeats, `instance_task_counts` per minute), so any
 * instance answers the timeseries for all live ones. Live = a heartbeat within 3 flushes.
 * Counts are added (not overwritten), so an instance restarted under the same INSTANCE_ID keeps
 * its earlier minutes in the database; the answering instance reports itself from its own ring. Rows older than the retention are pruned by whichever instance gets there.
 */
import type { Logger } from '../log.js';
import type { MinuteCounts, TaskCounts } from './task-counts.js';
import { TIMESERIES_RETENTION_MINUTES } from './task-counts.js';
import { localTaskCountSource, type InstanceMinutes, type TaskCountSource } from './timeseries.js';

/** The store's raw SQL (`?` placeholders); src/db's `Store.sql`. */
export type SqlRunner = <T = Record<string, unknown>>(query: string, params?: unknown[]) => Promise<T[]>;

export interface SharedTaskCountsOptions {
  instanceId: string;
  role: string;
  /** How often counts and the heartbeat are written, in ms (TIMESERIES_FLUSH_MS, default 5000). */
  flushMs: number;
}

/** Prune at most this often, in ms. */
const PRUNE_EVERY_MS = 10 * 60_000;
/** Rows kept beyond the queryable retention, in minutes. */
const PRUNE_MARGIN_MINUTES = 60;

export function createSharedTaskCounts(deps: { sql: SqlRunner; counts: TaskCounts; log: Logger }, opts: SharedTaskCountsOptions) {
  const { sql, counts, log } = deps;
  const { instanceId, role, flushMs } = opts;
  const liveMs = 3 * flushMs;
  const self = localTaskCountSource(instanceId, counts);
  let flushing: Promise<void> | null = null;
  let lastPrune = 0;
  let closed = false;

  async function write(): Promise<void> {
    await sql(
      `insert into service_instances (instance_id, role) values (?, ?)
       on conflict (instance_id) do update set last_seen_at = now(), role = excluded.role`,
      [instanceId, role],
    );
    const pending = counts.takePending();
    if (pending.length) {
      try {
        await upsertCounts(pending);
      } catch (err) {
        counts.restore(pending);
        throw err;
      }
    }
    if (counts.now() - lastPrune >= PRUNE_EVERY_MS) {
      lastPrune = counts.now();
      const oldest = Math.floor(counts.now() / 60_000) - TIMESERIES_RETENTION_MINUTES - PRUNE_MARGIN_MINUTES;
      await sql('delete from instance_task_counts where unix_minute < ?', [oldest]);
      await sql(`delete from service_instances where last_seen_at < now() - interval '25 hours'`);
    }
  }

  function upsertCounts(rows: MinuteCounts[]): Promise<unknown> {
    const values = rows.map(() => '(?, ?, ?, ?)').join(', ');
    const params = rows.flatMap((r) => [instanceId, r.minute, r.task_claimed, r.task_completed]);
    return sql(
      `insert into instance_task_counts (instance_id, unix_minute, task_claimed, task_completed) values ${values}
       on conflict (instance_id, unix_minute) do update set
         task_claimed = instance_task_counts.task_claimed + excluded.task_claimed,
         task_completed = instance_task_counts.task_completed + excluded.task_completed`,
      params,
    );
  }

  /** Writes the heartbeat and pending counts; one flush at a time. Never throws. */
  function flush(): Promise<void> {
    flushing ??= write()
      .catch((err: unknown) => log.warn({ err, component: 'timeseries' }, 'writing task counts failed; retrying at the next flush'))
      .finally(() => (flushing = null));
    return flushing;
  }

  const timer = setInterval(() => void flush(), flushMs);
  timer.unref();
  void flush(); // join the live set at once, not a flush later

  const source: TaskCountSource = {
    async read(fromMinute, toMinute) {
      const live = await sql<{ instance_id: string }>(
        `select instance_id from service_instances where last_seen_at > now() - (? * interval '1 millisecond')`,
        [liveMs],
      );
      const rows = await sql<{ instance_id: string; unix_minute: string | number; task_claimed: number; task_completed: number }>(
        `select c.instance_id, c.unix_minute, c.task_claimed, c.task_completed
           from instance_task_counts c join service_instances i on i.instance_id = c.instance_id
          where i.last_seen_at > now() - (? * interval '1 millisecond') and c.unix_minute between ? and ? and c.instance_id <> ?`,
        [liveMs, fromMinute, toMinute, instanceId],
      );
      // This instance from its own ring: complete and current (the database lags by up to a flush).
      const out: InstanceMinutes = await self.read(fromMinute, toMinute);
      for (const { instance_id } of live) if (!out.has(instance_id)) out.set(instance_id, new Map());
      for (const r of rows) {
        const minutes = out.get(r.instance_id) ?? out.set(r.instance_id, new Map()).get(r.instance_id)!;
        minutes.set(Number(r.unix_minute), { task_claimed: Number(r.task_claimed), task_completed: Number(r.task_completed) });
      }
      return out;
    },
  };

  return {
    source,
    flush,
    /** Final flush, then this instance leaves the live set at once. */
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      await flushing; // a flush under way took its counts before the latest ones: write those too
      await flush();
      await sql('delete from service_instances where instance_id = ?', [instanceId]).catch(() => undefined);
    },
  };
}

export type SharedTaskCounts = ReturnType<typeof createSharedTaskCounts>;
