/**
 * Webhook benchmark (issue 28 item 2): deliveries per second to a local receiver, and the CPU the
 * service spends per delivered event.
 *
 *   node --import tsx bench/webhooks/run.ts [--modes embedded,nats] [--deliveries 2000] [--endpoints 4]
 *        [--sessions 10] [--turn-seconds 15] [--no-turns] [--cpu-prof]
 *
 * Per mode, one service (the built bundle, `npm start`'s flags) and a receiver in this process:
 * 1. drain: `--deliveries` test-sends queued while the endpoints are disabled, then enabled: the
 *    time until the receiver has them all → deliveries/s; service CPU over that time / deliveries
 *    → CPU per delivery (claim, sign, POST, record), nothing else running.
 * 2. turns: K sessions run llmsim turns back to back for `--turn-seconds`, first without an
 *    endpoint, then with one subscribed to every subscribable type: the difference in service CPU
 *    per turn, divided by the deliveries per turn, is the added CPU per delivered event (outbox
 *    tap + delivery) on a busy service.
 * Results: a table on stdout and bench/results/webhooks-<date>.json.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { natsServiceEnv, startNatsServer } from '../../test/helpers/nats-server.js';
import { createTestDatabase } from '../../test/helpers/postgres.js';
import { formatProfile, summariseCpuProfile } from '../lib/cpuprofile.js';
import { machineInfo } from '../lib/machine.js';
import {
  SERVICE_ENTRY,
  SERVICE_NODE_FLAGS,
  buildIfStale,
  busyShare,
  freePort,
  readCpuSeconds,
  readSystemCpu,
  startServer,
} from '../lib/process.js';
import { startBenchReceiver, type BenchReceiver } from './receiver.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const ADMIN_KEY = 'bench-admin-key-0123456789abcdef';
const { values: args } = parseArgs({
  options: {
    modes: { type: 'string', default: 'embedded,nats' },
    deliveries: { type: 'string', default: '2000' },
    endpoints: { type: 'string', default: '4' },
    sessions: { type: 'string', default: '10' },
    'turn-seconds': { type: 'string', default: '15' },
    'no-turns': { type: 'boolean', default: false },
    'cpu-prof': { type: 'boolean', default: false },
  },
});
const log = (m: string) => process.stderr.write(m + '\n');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function api(base: string, method: string, path: string, body?: unknown) {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${ADMIN_KEY}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** Runs `n` calls with at most `k` in flight. */
async function pool(n: number, k: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(k, n) }, async () => {
      while (next < n) await fn(next++);
    }),
  );
}

async function createEndpoints(base: string, rx: BenchReceiver, n: number, eventTypes: string[]): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = await api(base, 'POST', '/v1/webhooks', { url: `${rx.url}/e${ids.length}`, event_types: eventTypes });
    if (r.status !== 201) throw new Error(`create endpoint: ${r.status} ${JSON.stringify(r.body)}`);
    rx.secrets.set(`/e${ids.length}`, r.body.secret);
    ids.push(r.body.endpoint.id);
  }
  return ids;
}

async function drain(base: string, pid: number, rx: BenchReceiver, total: number, endpoints: number) {
  const ids = await createEndpoints(base, rx, endpoints, ['turn.failed']);
  for (const id of ids) await api(base, 'PATCH', `/v1/webhooks/${id}`, { status: 'disabled' });
  await pool(total, 16, async (i) => {
    const r = await api(base, 'POST', `/v1/webhooks/${ids[i % ids.length]}/test`);
    if (r.status !== 202) throw new Error(`test-send: ${r.status} ${JSON.stringify(r.body)}`);
  });
  const before = rx.ids.size;
  const cpu0 = readCpuSeconds(pid)!;
  const sys0 = readSystemCpu();
  const t0 = performance.now();
  await Promise.all(ids.map((id) => api(base, 'PATCH', `/v1/webhooks/${id}`, { status: 'active' })));
  while (rx.ids.size - before < total) {
    if (performance.now() - t0 > 120_000) throw new Error(`drain: ${rx.ids.size - before} of ${total} after 120 s`);
    await sleep(20);
  }
  const s = (performance.now() - t0) / 1000;
  const cpu = readCpuSeconds(pid)! - cpu0;
  for (const id of ids) await api(base, 'DELETE', `/v1/webhooks/${id}`);
  return {
    deliveries: total,
    seconds: s,
    deliveriesPerSec: total / s,
    serviceCpuMsPerDelivery: (cpu * 1000) / total,
    machineBusy: busyShare(sys0, readSystemCpu()),
  };
}

async function runTurns(base: string, pid: number, sessions: number, seconds: number) {
  const agent = await api(base, 'POST', '/v1/agents', { name: 'bench', system_prompt: 'You help.' });
  const ids: string[] = [];
  for (let i = 0; i < sessions; i++) ids.push((await api(base, 'POST', '/v1/sessions', { agent_id: agent.body.id })).body.id);
  let turns = 0;
  const cpu0 = readCpuSeconds(pid)!;
  const end = Date.now() + seconds * 1000;
  await Promise.all(
    ids.map(async (id) => {
      while (Date.now() < end) {
        const r = await api(base, 'POST', `/v1/sessions/${id}/messages`, { message: { content: [{ type: 'text', text: 'hi' }] } });
        if (r.status === 201) turns++;
        else await sleep(5);
      }
    }),
  );
  await sleep(1500); // the last turns end
  const cpu = readCpuSeconds(pid)! - cpu0;
  return { turns, cpuMsPerTurn: (cpu * 1000) / Math.max(turns, 1) };
}

async function runMode(mode: string) {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-webhooks-'));
  const cleanups: (() => Promise<unknown>)[] = [async () => rmSync(dataDir, { recursive: true, force: true })];
  const port = await freePort();
  const env: Record<string, string> = {
    PORT: String(port),
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    BOOTSTRAP_ADMIN_API_KEY: ADMIN_KEY,
    LLMSIM_ENABLED: 'true',
    WEBHOOK_ALLOWED_PRIVATE_HOSTS: '127.0.0.1',
    WEBHOOK_ENDPOINT_CACHE_MS: '0',
    WEBHOOK_POLL_MS: '200',
    PATH: process.env['PATH'] ?? '',
    HOME: process.env['HOME'] ?? '/tmp',
  };
  if (mode === 'nats') {
    const db = await createTestDatabase('bench-webhooks');
    const nats = await startNatsServer();
    cleanups.push(
      () => db.drop(),
      () => nats.stop(),
    );
    Object.assign(
      env,
      { DATABASE_URL: db.url, SECRETS_ENCRYPTION_KEY: `bench:${randomBytes(32).toString('base64')}` },
      natsServiceEnv(nats),
    );
  }
  const base = `http://127.0.0.1:${port}`;
  const profileDir = join(dataDir, 'profile');
  const nodeArgs = [...SERVICE_NODE_FLAGS, ...(args['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : []), SERVICE_ENTRY];
  const service = await startServer({
    name: `service (${mode})`,
    args: nodeArgs,
    cwd: ROOT,
    env,
    readyUrl: `${base}/health`,
  });
  const rx = await startBenchReceiver(50);
  try {
    log(`[${mode}] drain of ${args.deliveries} deliveries over ${args.endpoints} endpoints`);
    const drained = await drain(base, service.pid, rx, Number(args.deliveries), Number(args.endpoints));
    let turns: Record<string, unknown> | null = null;
    if (!args['no-turns']) {
      const k = Number(args.sessions);
      const secs = Number(args['turn-seconds']);
      log(`[${mode}] turns without an endpoint (${k} sessions, ${secs} s)`);
      const without = await runTurns(base, service.pid, k, secs);
      const all = (await import('../../schemas/webhooks.js')).WEBHOOK_EVENT_TYPES;
      const before = rx.ids.size;
      await createEndpoints(base, rx, 1, [...all]);
      log(`[${mode}] turns with an endpoint subscribed to every type`);
      const withHook = await runTurns(base, service.pid, k, secs);
      // Until the backlog has drained: no new delivery for 2 s (at most 30 s).
      for (let last = -1, t0 = Date.now(); rx.ids.size !== last && Date.now() - t0 < 30_000; ) {
        last = rx.ids.size;
        await sleep(2000);
      }
      const delivered = rx.ids.size - before;
      const perTurn = delivered / Math.max(withHook.turns, 1);
      turns = {
        without,
        with: withHook,
        deliveredEvents: delivered,
        deliveriesPerTurn: perTurn,
        addedCpuMsPerDeliveredEvent: perTurn > 0 ? (withHook.cpuMsPerTurn - without.cpuMsPerTurn) / perTurn : null,
      };
    }
    return { mode, drain: drained, turns, badSignatures: rx.badSignatures, verifiedSample: rx.verified };
  } finally {
    await rx.close();
    await service.stop();
    const file = args['cpu-prof'] && existsSync(profileDir) ? readdirSync(profileDir).find((f) => f.endsWith('.cpuprofile')) : undefined;
    if (file) log(formatProfile(summariseCpuProfile(join(profileDir, file), 40), 30));
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  }
}

buildIfStale(ROOT);
const results = [];
for (const mode of args.modes.split(',')) results.push(await runMode(mode));
const out = { machine: machineInfo(), args, results };
for (const r of results) {
  console.log(
    `${r.mode}: drain ${r.drain.deliveriesPerSec.toFixed(0)} deliveries/s, ${r.drain.serviceCpuMsPerDelivery.toFixed(2)} ms service CPU per delivery` +
      (r.turns ? `; turns: ${JSON.stringify(r.turns)}` : '') +
      `; signatures verified ${r.verifiedSample}, bad ${r.badSignatures}`,
  );
}
mkdirSync(join(ROOT, 'bench/results'), { recursive: true });
const file = join(ROOT, 'bench/results', `webhooks-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
log(`results: ${file}`);
