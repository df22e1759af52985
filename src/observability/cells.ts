/**
 * Counters and histograms for hot paths. prom-client's own `labels(...)` children hash their
 * label object on every `inc`/`observe` (and histograms validate it), which costs an allocation
 * and a string build per call. Here a label set is resolved once to a cell — a plain object
 * with a number (counters) or bucket counts (histograms) — and the family renders its cells
 * through prom-client's Registry at scrape time (`registerMetric` with `get()`).
 */
import type { Registry } from 'prom-client';

type Labels = Record<string, string>;

interface MetricValue {
  metricName?: string;
  labels: Labels;
  value: number;
}

/** What prom-client's Registry reads from a registered metric. */
interface RegistryMetric {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
  get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: MetricValue[] }>;
}

export interface FamilyOptions {
  name: string;
  help: string;
  labelNames?: readonly string[];
}

abstract class Family<Cell> implements RegistryMetric {
  readonly name: string;
  readonly help: string;
  abstract readonly type: 'counter' | 'histogram';
  readonly aggregator = 'sum' as const;
  readonly #labelNames: readonly string[];
  readonly #cells = new Map<string, { labels: Labels; cell: Cell }>();

  constructor(registry: Registry, { name, help, labelNames = [] }: FamilyOptions) {
    this.name = name;
    this.help = help;
    this.#labelNames = labelNames;
    (registry as unknown as { registerMetric(m: RegistryMetric): void }).registerMetric(this);
  }

  /** The cell of one label set; resolve it once and keep it (a Map lookup and a string join otherwise). */
  cell(labels: Labels = {}): Cell {
    const key = this.#labelNames.map((n) => labels[n] ?? '').join('\u0000');
    let entry = this.#cells.get(key);
    if (!entry) {
      const own: Labels = {};
      for (const n of this.#labelNames) own[n] = labels[n] ?? '';
      entry = { labels: own, cell: this.newCell() };
      this.#cells.set(key, entry);
    }
    return entry.cell;
  }

  protected abstract newCell(): Cell;
  protected abstract render(labels: Labels, cell: Cell, out: MetricValue[]): void;

  async get() {
    const values: MetricValue[] = [];
    for (const { labels, cell } of this.#cells.values()) this.render(labels, cell, values);
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}

export class CounterCell {
  value = 0;
  inc(by = 1): void {
    this.value += by;
  }
}

/** A counter family (`…_total`). */
export class CounterFamily extends Family<CounterCell> {
  readonly type = 'counter' as const;
  protected newCell(): CounterCell {
    return new CounterCell();
  }
  protected render(labels: Labels, cell: CounterCell, out: MetricValue[]): void {
    out.push({ labels, value: cell.value });
  }
}

export class HistogramCell {
  readonly #bounds: readonly number[];
  /** Non-cumulative: counts[i] = observations in (bounds[i-1], bounds[i]]; the last slot is +Inf. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(bounds: readonly number[]) {
    this.#bounds = bounds;
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    const b = this.#bounds;
    let i = 0;
    while (i < b.length && value > b[i]!) i++;
    this.counts[i]!++;
    this.sum += value;
    this.count++;
  }

  get bounds(): readonly number[] {
    return this.#bounds;
  }
}

export interface HistogramOptions extends FamilyOptions {
  /** Upper bounds, ascending (+Inf is added). */
  buckets: readonly number[];
}

/** A histogram family (`…_bucket`, `…_sum`, `…_count`). */
export class HistogramFamily extends Family<HistogramCell> {
  readonly type = 'histogram' as const;
  readonly #buckets: readonly number[];

  constructor(registry: Registry, opts: HistogramOptions) {
    super(registry, opts);
    this.#buckets = [...opts.buckets];
  }

  protected newCell(): HistogramCell {
    return new HistogramCell(this.#buckets);
  }

  protected render(labels: Labels, cell: HistogramCell, out: MetricValue[]): void {
    let cumulative = 0;
    cell.bounds.forEach((le, i) => {
      cumulative += cell.counts[i]!;
      out.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le: String(le) }, value: cumulative });
    });
    out.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le: '+Inf' }, value: cell.count });
    out.push({ metricName: `${this.name}_sum`, labels, value: cell.sum });
    out.push({ metricName: `${this.name}_count`, labels, value: cell.count });
  }
}

/** Seconds: 1 ms to 10 s, for request handling and appends. */
export const LATENCY_BUCKETS_S = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;
/** Seconds: 100 ms to 10 min, for LLM calls, tools and turns. */
export const LONG_BUCKETS_S = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600] as const;
