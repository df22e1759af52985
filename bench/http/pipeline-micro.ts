/**
 * The request pipeline in-process, without the transport: CPU per request of the stages
 * (request id, access log, errors, route, auth, validation, handler) for one route, so changes to
 * them can be compared on a busy machine where req/s figures wander. Embedded mode, temp DATA_DIR.
 *
 *   node --import tsx bench/http/pipeline-micro.ts [--path /v1/capabilities/current_time] [--n 200000] [--metrics]
 *
 * `--metrics` adds the request-metrics stage (what METRICS_TOKEN / METRICS_PORT turn on).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createPipeline, createRouter, createValidation } from '../../src/http/index.js';
import { Exchange } from '../../src/http/pipeline.js';
import { namedSchemas } from '../../schemas/index.js';
import { Registry } from 'prom-client';
import { createHttpMetrics } from '../../src/observability/http-metrics.js';

const { values } = parseArgs({
  options: {
    path: { type: 'string', default: '/v1/capabilities/current_time' },
    n: { type: 'string', default: '200000' },
    metrics: { type: 'boolean', default: false },
  },
});
const n = Number(values.n);
const dataDir = mkdtempSync(join(tmpdir(), 'pipeline-micro-'));
const key = 'bench-admin-key-0123456789abcdef';
const app = await createApp(loadConfig({ PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'warn', BOOTSTRAP_ADMIN_API_KEY: key }));
const router = createRouter(app.routes, app.config.API_PREFIX);
const observer = values.metrics ? createHttpMetrics(new Registry()) : null;
const pipeline = createPipeline({
  router,
  validation: createValidation(namedSchemas),
  authenticate: app.services.auth.authenticate,
  observer,
});
const headers = { host: 'localhost', 'user-agent': 'bench', accept: '*/*', authorization: `Bearer ${key}` };

async function once(): Promise<number> {
  const ex = new Exchange({ method: 'GET', url: values.path!, rawQuery: '', headers, remoteAddress: () => '127.0.0.1' }, app.log);
  ex.match = router.match(ex.method, ex.url);
  await pipeline(ex);
  JSON.stringify((ex.reply as { body?: unknown }).body);
  return (ex.reply as { status: number }).status;
}

const heapMiB = () => {
  (globalThis as { gc?: () => void }).gc?.();
  return (process.memoryUsage().heapUsed / 2 ** 20).toFixed(1);
};
const status = await once();
if (status !== 200) throw new Error(`${values.path} answered ${status}`);
for (let i = 0; i < 20_000; i++) await once();
const heapBefore = heapMiB();
const cpu0 = process.cpuUsage();
const t0 = performance.now();
for (let i = 0; i < n; i++) await once();
const wall = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
console.log(
  `metrics ${values.metrics ? 'on' : 'off'}: heap used after GC: ${heapBefore} → ${heapMiB()} MiB; ${values.path}: ${((cpu.user + cpu.system) / n).toFixed(1)} µs CPU per request, ${((wall * 1000) / n).toFixed(1)} µs wall (${n} requests, pipeline + JSON.stringify of the body)`,
);
await app.close();
rmSync(dataDir, { recursive: true, force: true });
