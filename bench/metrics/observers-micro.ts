/**
 * CPU per call of the hot-path metric hooks (src/observability), next to prom-client's own
 * labelled children doing the same work, in one process:
 *  - one HTTP request observed (a counter by method/route/status, a latency histogram by route);
 *  - one SSE write observed (frames and bytes; the same frame to many clients, as the hub does);
 *  - one event append observed (append histogram, counters by type; a delta event).
 *
 *   node --import tsx bench/metrics/observers-micro.ts [--n 2000000]
 */
import { parseArgs } from 'node:util';
import { Counter, Histogram, Registry } from 'prom-client';
import type { Route } from '../../src/http/index.js';
import { LATENCY_BUCKETS_S } from '../../src/observability/cells.js';
import { createHttpMetrics, createSseMetrics } from '../../src/observability/http-metrics.js';
import { createTurnMetrics } from '../../src/observability/turn-metrics.js';

const { values } = parseArgs({ options: { n: { type: 'string', default: '2000000' } } });
const n = Number(values.n);

function measure(name: string, fn: (i: number) => void): void {
  for (let i = 0; i < 100_000; i++) fn(i); // warm-up
  const t0 = process.cpuUsage();
  for (let i = 0; i < n; i++) fn(i);
  const cpu = process.cpuUsage(t0);
  console.log(`${name.padEnd(58)} ${(((cpu.user + cpu.system) * 1000) / n).toFixed(0).padStart(5)} ns per call`);
}

const route = { method: 'GET', path: '/v1/sessions/:id/events' } as Route;
const http = createHttpMetrics(new Registry());
measure('HTTP request, cells (createHttpMetrics)', (i) => http.request(route, 'GET', 200, (i % 50) / 10_000));

const reg = new Registry();
const c = new Counter({ name: 'c_total', help: 'h', labelNames: ['method', 'route', 'status'], registers: [reg] });
const h = new Histogram({
  name: 'h_seconds',
  help: 'h',
  labelNames: ['method', 'route'],
  buckets: [...LATENCY_BUCKETS_S],
  registers: [reg],
});
const cChild = c.labels('GET', '/v1/sessions/:id/events', '200');
const hChild = h.labels('GET', '/v1/sessions/:id/events');
measure('HTTP request, prom-client labels() children resolved once', (i) => {
  cChild.inc();
  hChild.observe((i % 50) / 10_000);
});

const sse = createSseMetrics(new Registry(), () => 0);
const frame = `retry: 100\nid: 0192f0a0-0000-7000-8000-000000000000\nevent: output.message.delta\ndata: ${JSON.stringify({ delta: 'x'.repeat(200) })}\n\n`;
const frames = Array.from({ length: 10 }, (_, k) => frame.replace('x', String(k)));
// 100 clients per frame: the hub writes one string to every client of the session.
measure('SSE write, 100 clients per frame (createSseMetrics)', (i) => sse.written(frames[Math.floor(i / 100) % 10]!));
measure('SSE write, a new frame every write (worst case)', (i) => sse.written(frames[i % 10]!));

const turns = createTurnMetrics(new Registry(), { turnsRunning: () => 0, isCapability: () => true });
const delta = [{ type: 'output.message.delta' as const, data: { turn_id: 't', delta: 'x' } }];
const result = { ok: true as const, events: [] };
measure('event append of one delta (createTurnMetrics)', () => turns.appended(delta, 0.002, result));
