/**
 * The answer of `GET /v1/durable/metrics/timeseries` (spec 4.5) from per-instance, per-minute
 * task counts: one point per instance and interval, zeros included, the last interval being
 * the one in progress. Buckets are aligned to multiples of the interval since the unix epoch.
 */
import { TASK_METRICS, type MinuteCounts, type TaskCounts, type TaskMetric } from './task-counts.js';

export const DEFAULT_TIMESERIES_INTERVAL_S = 60;
export const DEFAULT_TIMESERIES_WINDOW_S = 3600;

/** One interval of one instance: `timestamp` is the interval's start (ISO 8601, UTC). */
export interface TimeseriesPoint {
  instance_id: string;
  timestamp: string;
  count: number;
}

export interface Timeseries {
  /** Present when more than one instance is covered (spec 4.5). */
  instance_count?: number;
  metrics: Record<TaskMetric, TimeseriesPoint[]>;
}

/** Per-minute counts by instance id, for the minutes in [fromMinute, toMinute]. */
export type InstanceMinutes = Map<string, Map<number, Omit<MinuteCounts, 'minute'>>>;

/** Where the counts come from: this instance alone, or every live instance (timeseries-store.ts). */
export interface TaskCountSource {
  /** Every instance to report (live ones; this one always), with its counts in the range. */
  read(fromMinute: number, toMinute: number): Promise<InstanceMinutes>;
}

/** Single instance (embedded and single mode): this instance's ring. */
export function localTaskCountSource(instanceId: string, counts: TaskCounts): TaskCountSource {
  return {
    async read(fromMinute, toMinute) {
      const minutes = new Map<number, Omit<MinuteCounts, 'minute'>>();
      for (let m = fromMinute; m <= toMinute; m++) {
        const claimed = counts.at('task_claimed', m);
        const completed = counts.at('task_completed', m);
        if (claimed || completed) minutes.set(m, { task_claimed: claimed, task_completed: completed });
      }
      return new Map([[instanceId, minutes]]);
    },
  };
}

/**
 * Builds the response for `intervalSeconds` buckets over the last `windowSeconds` (both
 * multiples of 60, the window a multiple of the interval: the route validates them).
 */
export async function buildTimeseries(
  source: TaskCountSource,
  nowMs: number,
  intervalSeconds: number,
  windowSeconds: number,
): Promise<Timeseries> {
  const step = intervalSeconds / 60;
  const buckets = windowSeconds / intervalSeconds;
  const nowMinute = Math.floor(nowMs / 60_000);
  const last = Math.floor(nowMinute / step) * step;
  const first = last - (buckets - 1) * step;
  const byInstance = await source.read(first, last + step - 1);
  const ids = [...byInstance.keys()].sort();
  const metrics = { task_claimed: [], task_completed: [] } as Record<TaskMetric, TimeseriesPoint[]>;
  for (const id of ids) {
    const minutes = byInstance.get(id)!;
    for (let b = first; b <= last; b += step) {
      const timestamp = new Date(b * 60_000).toISOString();
      for (const metric of TASK_METRICS) {
        let count = 0;
        for (let m = b; m < b + step; m++) count += minutes.get(m)?.[metric] ?? 0;
        metrics[metric].push({ instance_id: id, timestamp, count });
      }
    }
  }
  return ids.length > 1 ? { instance_count: ids.length, metrics } : { metrics };
}
