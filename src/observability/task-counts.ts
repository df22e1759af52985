/**
 * This instance's task counts for `GET /v1/durable/metrics/timeseries` (spec 4.5): turns claimed
 * from the queue and turns whose claim was settled as done (acknowledged), counted per minute.
 * A ring of per-minute slots holds the last `TIMESERIES_RETENTION_MINUTES`; in distributed mode
 * the counts not yet written to the database wait in `pending` (timeseries-store.ts).
 */

/** The task metrics of spec 4.5. */
export const TASK_METRICS = ['task_claimed', 'task_completed'] as const;
export type TaskMetric = (typeof TASK_METRICS)[number];

/** Minutes of history an instance keeps and a query may cover (24 h). */
export const TIMESERIES_RETENTION_MINUTES = 1440;
const MINUTE_MS = 60_000;
/** One slot more than the retention, so the minute in progress never overwrites the oldest queried one. */
const SLOTS = TIMESERIES_RETENTION_MINUTES + 1;

/** Counts of one minute, by metric; `minute` is unix minutes (ms / 60000). */
export interface MinuteCounts {
  minute: number;
  task_claimed: number;
  task_completed: number;
}

export class TaskCounts {
  readonly #minutes = new Float64Array(SLOTS).fill(-1);
  readonly #counts: Record<TaskMetric, Uint32Array> = { task_claimed: new Uint32Array(SLOTS), task_completed: new Uint32Array(SLOTS) };
  /** Counts not yet flushed to the shared store, by minute. */
  #pending = new Map<number, MinuteCounts>();
  readonly #now: () => number;

  /** `now`: the clock in unix ms (tests pin it). */
  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** Counts one task event in the current minute. */
  record(metric: TaskMetric): void {
    const minute = Math.floor(this.#now() / MINUTE_MS);
    const slot = minute % SLOTS;
    if (this.#minutes[slot] !== minute) {
      this.#minutes[slot] = minute;
      this.#counts.task_claimed[slot] = 0;
      this.#counts.task_completed[slot] = 0;
    }
    this.#counts[metric][slot]!++;
    let p = this.#pending.get(minute);
    if (!p) this.#pending.set(minute, (p = { minute, task_claimed: 0, task_completed: 0 }));
    p[metric]++;
  }

  /** The count of one minute (0 when nothing was recorded or it is older than the retention). */
  at(metric: TaskMetric, minute: number): number {
    const slot = minute % SLOTS;
    return this.#minutes[slot] === minute ? this.#counts[metric][slot]! : 0;
  }

  /** Takes the unflushed counts; give them back with `restore` when writing them failed. */
  takePending(): MinuteCounts[] {
    const out = [...this.#pending.values()];
    this.#pending = new Map();
    return out;
  }

  restore(counts: MinuteCounts[]): void {
    for (const c of counts) {
      const p = this.#pending.get(c.minute);
      if (!p) this.#pending.set(c.minute, { ...c });
      else {
        p.task_claimed += c.task_claimed;
        p.task_completed += c.task_completed;
      }
    }
  }

  now(): number {
    return this.#now();
  }
}
