/**
 * The instance's Prometheus registry (one per app, never prom-client's global one): process and
 * Node.js metrics (prom-client's `collectDefaultMetrics`, standard names), the build/role info,
 * and dependency health probed at scrape time.
 */
import { performance } from 'node:perf_hooks';
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import { withDeadline } from '../retry/index.js';
import { METRIC_PREFIX } from './names.js';

/** A dependency probe (the same ones `/health` runs): throws when it is unreachable. */
export interface DependencyCheck {
  name: string;
  check(): Promise<void>;
}

export interface PrometheusOptions {
  checks: DependencyCheck[];
  /** Constant labels of `agent_session_info`. */
  info: { version: string; mode: string; role: string; instance_id: string };
  /** How long one dependency probe may take at scrape time, in ms (default 2000). */
  checkTimeoutMs?: number;
}

export function createPrometheusRegistry({ checks, info, checkTimeoutMs = 2000 }: PrometheusOptions): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  new Gauge({
    name: `${METRIC_PREFIX}info`,
    help: 'Always 1; the labels describe this instance.',
    labelNames: Object.keys(info),
    registers: [registry],
  }).set(info, 1);
  const up = new Map<string, boolean>();
  const seconds = new Map<string, number>();
  // Both gauges below read one round of probes per scrape (the registry collects them concurrently).
  let round: Promise<void> | null = null;
  const probeAll = () =>
    (round ??= Promise.all(
      checks.map(async (c) => {
        const started = performance.now();
        up.set(c.name, await probe(c, checkTimeoutMs));
        seconds.set(c.name, (performance.now() - started) / 1000);
      }),
    )
      .then(() => undefined)
      .finally(() => (round = null)));
  new Gauge({
    name: `${METRIC_PREFIX}dependency_up`,
    help: 'Whether the dependency (database, bus = NATS or the in-process bus) answered its health probe at this scrape (1) or not (0).',
    labelNames: ['dependency'],
    registers: [registry],
    async collect() {
      await probeAll();
      for (const [dependency, ok] of up) this.set({ dependency }, ok ? 1 : 0);
    },
  });
  new Gauge({
    name: `${METRIC_PREFIX}dependency_check_duration_seconds`,
    help: 'How long the dependency took to answer its health probe at this scrape.',
    labelNames: ['dependency'],
    registers: [registry],
    async collect() {
      await probeAll();
      for (const [dependency, s] of seconds) this.set({ dependency }, s);
    },
  });
  return registry;
}

async function probe(c: DependencyCheck, timeoutMs: number): Promise<boolean> {
  try {
    await withDeadline(c.check(), timeoutMs);
    return true;
  } catch {
    return false;
  }
}
