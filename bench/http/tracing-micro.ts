/**
 * CPU per request of tracing (src/observability/tracing.ts), in-process like pipeline-micro.ts:
 * the same route through the pipeline without the trace stage, with it and export off (the
 * default: id-only spans), and with export on (OpenTelemetry SDK spans, batched and exported over
 * OTLP/HTTP JSON to a sink in a child process, so the sink's CPU is not counted). Each variant
 * also runs with an incoming `traceparent`. Variants are interleaved over rounds; the median of
 * the rounds is printed. Embedded mode, temp DATA_DIR.
 *
 *   node --experimental-async-context-frame --import tsx bench/http/tracing-micro.ts [--path /v1/capabilities/current_time] [--n 50000] [--rounds 5]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createPipeline, createRouter, createValidation } from '../../src/http/index.js';
import { Exchange } from '../../src/http/pipeline.js';
import { createIdTracing, createTracing, type Tracing } from '../../src/observability/tracing.js';
import { namedSchemas } from '../../schemas/index.js';
import { TurnTrace } from '../../actors/session/turn-trace.js';
import { turnEvents } from '../../src/turns/turn-events.js';

const { values } = parseArgs({
  options: {
    path: { type: 'string', default: '/v1/capabilities/current_time' },
    n: { type: 'string', default: '50000' },
    rounds: { type: 'string', default: '5' },
  },
});
const n = Number(values.n);
const rounds = Number(values.rounds);

// The OTLP sink: a child process that answers every export with 200 and drops it.
const sinkCode = `require('node:http').createServer((q, s) => { q.resume(); q.on('end', () => s.end('{}')); }).listen(0, '127.0.0.1', function () { console.log(this.address().port); });`;
const sink = spawn(process.execPath, ['-e', sinkCode], { stdio: ['ignore', 'pipe', 'inherit'] });
const sinkPort = await new Promise<number>((resolve) => sink.stdout!.once('data', (d: Buffer) => resolve(Number(String(d).trim()))));

const dataDir = mkdtempSync(join(tmpdir(), 'tracing-micro-'));
const key = 'bench-admin-key-0123456789abcdef';
const app = await createApp(loadConfig({ PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'warn', BOOTSTRAP_ADMIN_API_KEY: key }));
const router = createRouter(app.routes, app.config.API_PREFIX);
const exporting = await createTracing({
  tracesUrl: `http://127.0.0.1:${sinkPort}/v1/traces`,
  serviceName: 'bench',
  serviceVersion: '0.0.0',
  instanceId: 'bench',
  role: 'all',
  exportDelayMs: 200,
});
const base = { router, validation: createValidation(namedSchemas), authenticate: app.services.auth.authenticate };
const pipelines: Record<string, (ex: Exchange) => Promise<void>> = {
  'no trace stage': createPipeline(base),
  'export off': createPipeline({ ...base, tracing: createIdTracing() }),
  'export on': createPipeline({ ...base, tracing: exporting }),
};
const plain = { host: 'localhost', 'user-agent': 'bench', accept: '*/*', authorization: `Bearer ${key}` };
const traced = { ...plain, traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' };

async function once(pipeline: (ex: Exchange) => Promise<void>, headers: Record<string, string>): Promise<number> {
  const ex = new Exchange({ method: 'GET', url: values.path!, rawQuery: '', headers, remoteAddress: () => '127.0.0.1' }, app.log);
  ex.match = router.match(ex.method, ex.url);
  await pipeline(ex);
  JSON.stringify((ex.reply as { body?: unknown }).body);
  return (ex.reply as { status: number }).status;
}

async function measure(pipeline: (ex: Exchange) => Promise<void>, headers: Record<string, string>): Promise<number> {
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < n; i++) await once(pipeline, headers);
  const cpu = process.cpuUsage(cpu0);
  return (cpu.user + cpu.system) / n;
}

const variants = Object.entries(pipelines).flatMap(([name, p]) => [
  { name, headers: plain, p },
  { name: `${name} + traceparent`, headers: traced, p },
]);
for (const v of variants) {
  if ((await once(v.p, v.headers)) !== 200) throw new Error(`${values.path} failed`);
  for (let i = 0; i < 10_000; i++) await once(v.p, v.headers);
}
const results = new Map<string, number[]>(variants.map((v) => [v.name, []]));
for (let r = 0; r < rounds; r++) for (const v of variants) results.get(v.name)!.push(await measure(v.p, v.headers));
const median = (xs: number[]) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const min = (xs: number[]) => Math.min(...xs);
const baseRounds = results.get('no trace stage')!;
const delta = (x: number, b: number) => `${x - b >= 0 ? '+' : ''}${(x - b).toFixed(2)}`;
console.log(
  `${values.path}, ${n} requests x ${rounds} rounds, CPU µs per request (pipeline + JSON.stringify); min and median of the rounds, and each minus 'no trace stage':`,
);
for (const [name, xs] of results) {
  console.log(
    `  ${name.padEnd(30)} min ${min(xs).toFixed(2).padStart(6)} (${delta(min(xs), min(baseRounds))})  median ${median(xs).toFixed(2).padStart(6)} (${delta(median(xs), median(baseRounds))})  rounds ${xs.map((x) => x.toFixed(1)).join(' ')}`,
  );
}

// The turn side: what stamping costs per event (a turn's events pass TurnTrace.stamp once each),
// for a reason step's events with a turn and a step span; export on includes the two spans.
const turnRef = { turn_id: 't', input_message_id: 'm' };
async function stampCost(tracing: Tracing): Promise<number> {
  const per = 200;
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < n / 10; i++) {
    const trace = new TurnTrace(tracing, traced.traceparent, { 'session.id': 's' });
    trace.startStep('reason', { 'turn.iteration': 1 });
    for (let j = 0; j < per; j++) trace.stamp([turnEvents.outputDelta('e', turnRef, 'x')]);
    trace.end();
    if (i % 100 === 0) await new Promise((r) => setImmediate(r));
  }
  const cpu = process.cpuUsage(cpu0);
  return (cpu.user + cpu.system) / ((n / 10) * per);
}
const buildOnly = async () => {
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < (n / 10) * 200; i++) turnEvents.outputDelta('e', turnRef, 'x');
  const cpu = process.cpuUsage(cpu0);
  return (cpu.user + cpu.system) / ((n / 10) * 200);
};
const stampRounds = { build: [] as number[], off: [] as number[], on: [] as number[] };
for (let r = 0; r < rounds; r++) {
  stampRounds.build.push(await buildOnly());
  stampRounds.off.push(await stampCost(createIdTracing()));
  stampRounds.on.push(await stampCost(exporting));
}
console.log(
  `turn events: building a delta event ${(min(stampRounds.build) * 1000).toFixed(0)} ns; building + stamping, export off ${(min(stampRounds.off) * 1000).toFixed(0)} ns, export on ${(min(stampRounds.on) * 1000).toFixed(0)} ns (min of rounds; 200 events per turn span)`,
);
await exporting.close();
await app.close();
sink.kill();
rmSync(dataDir, { recursive: true, force: true });
