import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

/** One family of the Prometheus text format as parse-prometheus-text-format returns it. */
export interface MetricFamily {
  name: string;
  help: string;
  type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
  metrics: { value?: string; labels?: Record<string, string>; buckets?: Record<string, string>; count?: string; sum?: string }[];
}

// The parser is CommonJS without types.
const parsePrometheusTextFormat = createRequire(import.meta.url)('parse-prometheus-text-format') as (text: string) => MetricFamily[];

/**
 * A parsed scrape: families by name (with their types), and the value of one series. The
 * parser folds every series of a histogram into one (it keeps only unlabelled `_sum`/`_count`),
 * so histograms are read a second time as untyped `_bucket`/`_sum`/`_count` families, which it
 * keeps series by series.
 */
export class Scrape {
  readonly families: Map<string, MetricFamily>;
  readonly #samples: Map<string, MetricFamily>;

  constructor(readonly text: string) {
    this.families = new Map(parsePrometheusTextFormat(text).map((f) => [f.name, f]));
    const untyped = text.replace(/^# TYPE (\S+) histogram$/gm, '# TYPE $1 untyped');
    // Untyped, each run of lines of one name is a family of its own: merge runs of the same name.
    this.#samples = new Map();
    for (const f of parsePrometheusTextFormat(untyped)) {
      const seen = this.#samples.get(f.name);
      if (seen) seen.metrics.push(...f.metrics);
      else this.#samples.set(f.name, f);
    }
  }

  family(name: string): MetricFamily {
    const f = this.families.get(name);
    assert.ok(f, `the scrape has no metric ${name}`);
    return f;
  }

  /** The series of one name (histograms: read `<name>_bucket`, `_sum`, `_count`); [] when absent. */
  series(name: string): MetricFamily['metrics'] {
    return this.#samples.get(name)?.metrics ?? [];
  }

  /** The sum over series whose labels include `labels` (histograms: their `_count`). 0 when none matches. */
  value(name: string, labels: Record<string, string> = {}): number {
    const series = this.family(name).type === 'HISTOGRAM' ? `${name}_count` : name;
    let sum = 0;
    for (const m of this.#samples.get(series)?.metrics ?? []) {
      if (!Object.entries(labels).every(([k, v]) => m.labels?.[k] === v)) continue;
      sum += Number(m.value);
    }
    return sum;
  }
}

/** GETs a /metrics URL and parses it; asserts the status and the content type. */
export async function scrape(url: string, token?: string): Promise<Scrape> {
  const res = await fetch(url, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  const text = await res.text();
  assert.equal(res.status, 200, text);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  return new Scrape(text);
}
