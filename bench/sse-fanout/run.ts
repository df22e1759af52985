/**
 * SSE fan-out benchmark (issue 5): N SSE connections over S sessions on one service instance,
 * events appended at a rate R, side by side with a bare uWebSockets.js SSE broadcast server.
 *
 *   node --import tsx bench/sse-fanout/run.ts [--connections 10000] [--sessions 1000]
 *        [--rate 10000] [--ramp 20000,40000,80000] [--duration 10] [--warmup 3]
 *        [--clients 4] [--mode postgres|nats] [--targets bare,service] [--cpu-prof]
 *        [--no-pin] [--no-write] [--quiet-wait 15] [--label text]
 *
 * Rates are deliveries/s in total (appends/s × N/S). Processes: the service (bench-only entry
 * server.ts = createApp(loadConfig()) plus the writer, over a fresh PostgreSQL database and the
 * local bus, or nats-server in --mode nats), the bare server (bare-server.ts), and --clients
 * load-generator processes (client.ts, raw sockets). With two or more CPUs both servers are
 * pinned to CPU 0 and the load generators to CPU 1; PostgreSQL / nats-server float. The parent
 * keeps the writer's clock and drives every child over a UNIX control socket (control.ts).
 *
 * Figures per target: connections held, RSS per idle connection ((RSS with N idle streams −
 * RSS before them) / N, after a forced GC both times), and for each offered rate: delivered
 * events/s, p50/p99/max append→receive latency, server CPU. Targets are measured alternately
 * at each rate. Results: a table on stdout and bench/results/sse-fanout-<date>-<mode>.json.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { createTestDatabase, TEST_PG_URL } from '../../test/helpers/postgres.js';
import { natsServiceEnv, startNatsServer } from '../../test/helpers/nats-server.js';
import { formatProfile, summariseCpuProfile, type ProfileSummary } from '../lib/cpuprofile.js';
import { machineInfo } from '../lib/machine.js';
import {
  SERVICE_NODE_FLAGS,
  busyShare,
  canPin,
  cpuCount,
  freePort,
  readSystemCpu,
  spawnProcess,
  startServer,
  waitForQuiet,
  type Proc,
} from '../lib/process.js';
import { createControlHub, type Peer } from './control.js';
import { BUCKETS, mergeSparse, percentilesMs } from './histogram.js';
import { oneOf, positiveInt, round2 } from '../lib/args.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const HERE = join(ROOT, 'bench/sse-fanout');
const ADMIN_KEY = 'bench-admin-key-0123456789abcdef';
const TARGETS = {
  connections: 10_000,
  p99Ms: 100,
  throughputRatio: 0.7,
  rssPerIdleConnKiB: 10,
};

const { values: args } = parseArgs({
  options: {
    connections: { type: 'string', default: '10000' },
    sessions: { type: 'string', default: '1000' },
    rate: { type: 'string', default: '10000' },
    ramp: { type: 'string', default: '20000,40000,80000' },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '3' },
    clients: { type: 'string', default: '4' },
    concurrency: { type: 'string', default: '64' },
    mode: { type: 'string', default: 'postgres' },
    targets: { type: 'string', default: 'bare,service' },
    'tick-ms': { type: 'string', default: '5' },
    'cpu-prof': { type: 'boolean', default: false },
    /** Directory for V8 heap snapshots of each server before and after its streams opened. */
    'heap-snapshots': { type: 'string' },
    pin: { type: 'boolean', default: true },
    'no-pin': { type: 'boolean', default: false },
    'no-write': { type: 'boolean', default: false },
    'quiet-wait': { type: 'string', default: '15' },
    label: { type: 'string', default: '' },
    /** 'no-idle-poll': local bus live feeds without the per-session idle poll (see server.ts). */
    experiment: { type: 'string' },
    /** Extra Node/V8 flags for both servers, after the production ones (SERVICE_NODE_FLAGS). */
    'node-option': { type: 'string', multiple: true, default: [] },
  },
});

const N = positiveInt('connections', args.connections!);
const S = positiveInt('sessions', args.sessions!);
const R = positiveInt('rate', args.rate!);
const ramp = args.ramp
  ? args.ramp
      .split(',')
      .filter(Boolean)
      .map((r) => positiveInt('ramp', r.trim()))
  : [];
const rates = [R, ...ramp.filter((r) => r !== R)];
const durationS = positiveInt('duration', args.duration!);
const warmupS = Number(args.warmup);
const K = positiveInt('clients', args.clients!);
const concurrency = positiveInt('concurrency', args.concurrency!);
const mode = oneOf('mode', args.mode!, ['postgres', 'nats'] as const);
const targetNames = args.targets!.split(',').map((t) => oneOf('targets', t.trim(), ['bare', 'service'] as const));
const tickMs = positiveInt('tick-ms', args['tick-ms']!);
const quietWaitMs = Number(args['quiet-wait']) * 1000;
const pin = args.pin && !args['no-pin'] && canPin();
const serverCpus = pin ? '0' : undefined;
const clientCpus = pin ? String(cpuCount() - 1) : undefined;
const fanout = N / S;
/** Both servers run with the service's production flags (npm start, Dockerfile), so GC settings match. */
const nodeFlags = [...SERVICE_NODE_FLAGS, ...(args['node-option'] ?? []), '--expose-gc'];

if (N / K > 15_000)
  throw new Error(`--connections / --clients = ${N / K} sockets per client process; keep it <= 15000 (open-files limit 20000)`);
if (N > 15_000) throw new Error('--connections above 15000 would exceed the open-files limit (20000) of the one server process');

type TargetName = 'bare' | 'service';

interface Step {
  offeredDeliveriesPerSec: number;
  appendsPerSec: number;
  windowS: number;
  /** Appends (service) / broadcasts (bare) completed in the window, per second. */
  appendedPerSec: number;
  deliveredPerSec: number;
  deliveredShare: number;
  latencyMs: { p50: number; p90: number; p99: number; p999: number; max: number; samples: number };
  /** Service only: time inside bus.events.append (store + notify), a part of latencyMs. */
  appendMs: { p50: number; p99: number; max: number } | null;
  /** PostgreSQL mode: transactions committed in the benchmark database per second (every statement is one). */
  dbTransactionsPerSec: number | null;
  serverCpuShare: number | null;
  machineBusyShare: number | null;
  backgroundBusyShare: number | null;
  loadavg1: number;
  appendsFailed: number;
  appendsShed: number;
  streamsAtEnd: number;
  clientsOpenAtEnd: number;
}

interface TargetResult {
  name: TargetName;
  description: string;
  connectMs: number;
  connectsPerSec: number;
  connectFailures: Record<string, number>;
  connectionsRequested: number;
  connectionsOpened: number;
  connectionsHeldAtEnd: number;
  serverStreamsAtEnd: number;
  closedByServerDuringRun: number;
  rssBaselineKiB: number;
  rssIdleKiB: number;
  rssPerIdleConnKiB: number;
  heapUsedPerIdleConnBytes: number;
  idleDbTransactionsPerSec: number | null;
  idleServerCpuShare: number | null;
  /** process.memoryUsage() of the server before its streams opened and with them idle (after GC). */
  memoryBefore: NodeJS.MemoryUsage;
  memoryIdle: NodeJS.MemoryUsage;
  serverWarnings?: string[];
  steps: Step[];
  maxDeliveredPerSec: number;
}

const log = (msg: string) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<void> {
  const machine = machineInfo();
  const cleanups: (() => Promise<unknown>)[] = [];
  const work = mkdtempSync(join(tmpdir(), 'bench-sse-'));
  cleanups.unshift(async () => rmSync(work, { recursive: true, force: true }));
  const control = join(work, 'control.sock');
  const hub = createControlHub(control);
  await hub.listen();
  cleanups.unshift(() => hub.close());
  let profile: (ProfileSummary & { file: string }) | undefined;
  const results = new Map<TargetName, TargetResult>();
  let appendOnly: Step | null = null;

  try {
    // --- load generators (shared by both phases) ---------------------------------------------
    const clients: Peer[] = [];
    for (let k = 0; k < K; k++) {
      const name = `client-${k}`;
      const proc = spawnProcess({ name, args: ['--import', 'tsx', join(HERE, 'client.ts'), control, name], cwd: ROOT, cpus: clientCpus });
      cleanups.unshift(() => proc.stop(2000));
      clients.push(await hub.peer(name));
    }

    // --- one phase per target, one after the other: only the measured server runs ------------
    for (const name of targetNames) {
      const phaseCleanups: (() => Promise<unknown>)[] = [];
      try {
        const started = await startTarget(name, control, hub, phaseCleanups);
        const { proc, peer, port, sessionIds, dbStatements } = started;
        const ctx: StepContext = { name, proc, peer, clients, dbStatements };

        if (name === 'service') {
          // Control: the writer alone at rate R, before any stream exists (nothing watched).
          appendOnly = await runStep(ctx, R, undefined);
          log(`service (no streams): ${fmtStep(appendOnly)}`);
        }

        await peer.call('gc');
        await sleep(500);
        const baseline = proc.memory()!.rssKiB;
        const mem0 = (await peer.call<{ memory: NodeJS.MemoryUsage }>('stats')).memory;
        const heap0 = mem0.heapUsed;
        if (args['heap-snapshots'])
          await peer.call('heapSnapshot', { file: join(resolve(args['heap-snapshots']), `${name}-before.heapsnapshot`) });
        const paths = Array.from({ length: N }, (_, i) => (name === 'bare' ? `/s/c${i % S}` : `/v1/sessions/${sessionIds[i % S]}/sse`));
        const headers = name === 'service' ? { Authorization: `Bearer ${ADMIN_KEY}` } : {};
        log(`${name}: opening ${N} streams over ${S} ${name === 'bare' ? 'channels' : 'sessions'} from ${K} client processes …`);
        const db0 = await dbStatements?.();
        const opened = await Promise.all(
          clients.map((c, k) =>
            c.call<{ opened: number; failed: number; ms: number; failures: Record<string, number> }>('open', {
              target: name,
              host: '127.0.0.1',
              port,
              paths: paths.filter((_, i) => i % K === k),
              headers,
              concurrency,
              timeoutMs: 120_000,
            }),
          ),
        );
        const connectMs = Math.max(...opened.map((o) => o.ms));
        const db1 = await dbStatements?.();
        const connectionsOpened = opened.reduce((a, o) => a + o.opened, 0);
        const failures: Record<string, number> = {};
        for (const o of opened) for (const [k, v] of Object.entries(o.failures)) failures[k] = (failures[k] ?? 0) + v;
        log(
          `${name}: ${connectionsOpened}/${N} open in ${(connectMs / 1000).toFixed(1)} s` +
            (db0 !== undefined && db1 !== undefined
              ? ` (${Math.round((db1 - db0) / Math.max(1, connectionsOpened))} DB transactions per stream)`
              : '') +
            (Object.keys(failures).length ? ` (failures ${JSON.stringify(failures)})` : ''),
        );
        await sleep(3000);
        await peer.call('gc');
        await sleep(1000);
        const idle = proc.memory()!.rssKiB;
        const stats1 = await peer.call<{ memory: NodeJS.MemoryUsage; heapSpaces?: Record<string, [number, number]> }>('stats');
        const mem1 = stats1.memory;
        if (stats1.heapSpaces)
          log(
            `${name}: V8 heap ${Math.round(mem1.heapTotal / 1048576)} MiB committed; per space [committed, used] MiB ${JSON.stringify(stats1.heapSpaces)}`,
          );
        const heap1 = mem1.heapUsed;
        if (args['heap-snapshots'])
          await peer.call('heapSnapshot', { file: join(resolve(args['heap-snapshots']), `${name}-idle.heapsnapshot`) });
        const per = connectionsOpened ? (idle - baseline) / connectionsOpened : 0;
        log(
          `${name}: RSS ${Math.round(baseline / 1024)} → ${Math.round(idle / 1024)} MiB: ${per.toFixed(2)} KiB per idle stream (V8 heap used ${Math.round((heap1 - heap0) / Math.max(1, connectionsOpened))} B per stream)`,
        );
        // Idle cost: CPU (heartbeats, and for the service whatever its bus does) and DB traffic.
        const idleCpu0 = proc.cpuSeconds();
        const idleDb0 = await dbStatements?.();
        await sleep(10_000);
        const idleCpu1 = proc.cpuSeconds();
        const idleDb1 = await dbStatements?.();
        const idleDbPerSec = idleDb0 !== undefined && idleDb1 !== undefined ? Math.round((idleDb1 - idleDb0) / 10) : null;
        const idleCpuShare = idleCpu0 !== null && idleCpu1 !== null ? round2((idleCpu1 - idleCpu0) / 10) : null;
        log(
          `${name}: idle with ${N} streams and no events: server CPU ${pct(idleCpuShare)}` +
            (idleDbPerSec !== null ? `, ${idleDbPerSec} DB transactions/s` : ''),
        );
        const r: TargetResult = {
          name,
          description:
            name === 'bare'
              ? 'bare uWS SSE broadcast'
              : `service GET /v1/sessions/{id}/sse (${mode === 'nats' ? 'NATS JetStream' : 'PostgreSQL, local bus'}${args.experiment ? `, experiment ${args.experiment}` : ''})`,
          connectMs,
          connectsPerSec: Math.round(connectionsOpened / (connectMs / 1000)),
          connectFailures: failures,
          connectionsRequested: N,
          connectionsOpened,
          connectionsHeldAtEnd: 0,
          serverStreamsAtEnd: 0,
          closedByServerDuringRun: 0,
          rssBaselineKiB: baseline,
          rssIdleKiB: idle,
          rssPerIdleConnKiB: round2(per),
          heapUsedPerIdleConnBytes: connectionsOpened ? Math.round((heap1 - heap0) / connectionsOpened) : 0,
          idleDbTransactionsPerSec: idleDbPerSec,
          idleServerCpuShare: idleCpuShare,
          memoryBefore: mem0,
          memoryIdle: mem1,
          steps: [],
          maxDeliveredPerSec: 0,
        };
        results.set(name, r);

        for (const rate of rates) {
          const profileFile =
            args['cpu-prof'] && name === 'service' && rate === R
              ? join(tmpdir(), `sse-fanout-service-${machine.date.replace(/[:.]/g, '-')}.cpuprofile`)
              : undefined;
          const step = await runStep(ctx, rate, profileFile);
          r.steps.push(step);
          log(`${name.padEnd(7)} ${fmtStep(step)}`);
          if (profileFile) profile = { file: profileFile, ...summariseCpuProfile(profileFile, 30) };
          // Saturated: it fell behind and delivered hardly more than at the previous rate.
          const prev = r.steps.at(-2);
          if (step.deliveredShare < 0.9 && (!prev || step.deliveredPerSec < prev.deliveredPerSec * 1.1)) break;
        }

        const reports = await Promise.all(clients.map((c) => c.call<ClientReport>('report', { target: name })));
        r.connectionsHeldAtEnd = reports.reduce((a, x) => a + x.open, 0);
        r.closedByServerDuringRun = reports.reduce((a, x) => a + x.closedAfterOpen, 0);
        r.serverStreamsAtEnd = (await peer.call<{ streams: number }>('stats')).streams;
        r.maxDeliveredPerSec = maxDelivered(r.steps);
        log(
          `${name}: ${r.connectionsHeldAtEnd} streams held at the end (server counts ${r.serverStreamsAtEnd}); ${r.closedByServerDuringRun} closed during the run`,
        );
        // Warnings the server logged (e.g. a session feed that failed and reset its streams).
        r.serverWarnings = proc
          .output()
          .split('\n')
          .filter((l) => /"level":(40|50|60)/.test(l))
          .slice(-20);
        if (r.serverWarnings.length) log(`${name}: last server warnings:\n  ${r.serverWarnings.join('\n  ')}`);
        await Promise.all(clients.map((c) => c.call('closeAll', { target: name })));
      } finally {
        for (const c of phaseCleanups) await c().catch(() => undefined);
      }
    }

    for (const c of cleanups.splice(0)) await c().catch(() => undefined);

    const bare = results.get('bare');
    const svc = results.get('service');
    const atR = (r: TargetResult | undefined) => r?.steps.find((s) => s.offeredDeliveriesPerSec === R);
    const ratios = {
      maxDeliveredServiceOverBare: bare && svc && bare.maxDeliveredPerSec ? round2(svc.maxDeliveredPerSec / bare.maxDeliveredPerSec) : null,
      rssPerIdleConnServiceOverBare: bare && svc && bare.rssPerIdleConnKiB ? round2(svc.rssPerIdleConnKiB / bare.rssPerIdleConnKiB) : null,
      p99AtRServiceOverBare:
        atR(bare) && atR(svc) && atR(bare)!.latencyMs.p99 ? round2(atR(svc)!.latencyMs.p99 / atR(bare)!.latencyMs.p99) : null,
    };
    const targets = svc
      ? {
          connectionsHeld: {
            target: TARGETS.connections,
            value: svc.connectionsHeldAtEnd,
            met: svc.connectionsHeldAtEnd >= Math.min(N, TARGETS.connections),
          },
          p99AtRateMs: {
            target: TARGETS.p99Ms,
            value: atR(svc)?.latencyMs.p99 ?? null,
            met: (atR(svc)?.latencyMs.p99 ?? Infinity) < TARGETS.p99Ms && (atR(svc)?.deliveredShare ?? 0) >= 0.95,
          },
          throughputOverBare: {
            target: TARGETS.throughputRatio,
            value: ratios.maxDeliveredServiceOverBare,
            met: ratios.maxDeliveredServiceOverBare === null ? null : ratios.maxDeliveredServiceOverBare >= TARGETS.throughputRatio,
          },
          rssPerIdleConnKiB: {
            target: TARGETS.rssPerIdleConnKiB,
            value: svc.rssPerIdleConnKiB,
            met: svc.rssPerIdleConnKiB <= TARGETS.rssPerIdleConnKiB,
          },
        }
      : null;

    const report = {
      benchmark: 'sse-fanout',
      label: args.label || null,
      experiment: args.experiment ?? null,
      machine,
      params: {
        mode,
        connections: N,
        sessions: S,
        streamsPerSession: fanout,
        rate: R,
        rates,
        durationS,
        warmupS,
        clientProcesses: K,
        pinned: pin,
        serverCpus: serverCpus ?? null,
        clientCpus: clientCpus ?? null,
        tickMs,
      },
      note: 'Load generators share the 2-CPU machine with the servers (and PostgreSQL / nats-server); other engineers ran test suites on the same machine during the run (see backgroundBusyShare / loadavg1 per step). Targets are measured one after the other (bare first).',
      results: [...results.values()],
      serviceAppendOnly: appendOnly,
      ratios,
      targets,
      ...(profile ? { profile } : {}),
    };

    process.stdout.write(markdown(report.results, R) + '\n');
    process.stdout.write(`\nratios service/bare: ${JSON.stringify(ratios)}\ntargets: ${JSON.stringify(targets)}\n`);
    if (profile) process.stdout.write(`\nCPU profile of the service at ${R}/s (${profile.file}):\n${formatProfile(profile, 25)}\n`);
    if (!args['no-write']) {
      const dir = join(ROOT, 'bench/results');
      mkdirSync(dir, { recursive: true });
      const file = join(
        dir,
        `sse-fanout-${machine.date.slice(0, 16).replace(':', '')}-${mode}${args.experiment ? '-' + args.experiment : ''}${args.label ? '-' + args.label : ''}.json`,
      );
      writeFileSync(file, JSON.stringify(report, null, 2) + '\n');
      process.stdout.write(`\nwritten: ${file}\n`);
    }
  } finally {
    for (const c of cleanups) await c().catch(() => undefined);
  }
}

interface Started {
  proc: Proc;
  peer: Peer;
  port: number;
  sessionIds: string[];
  /** PostgreSQL mode: the benchmark database's committed transactions so far (pg_stat_database). */
  dbStatements?: () => Promise<number>;
}

async function startTarget(
  name: TargetName,
  control: string,
  hub: ReturnType<typeof createControlHub>,
  cleanups: (() => Promise<unknown>)[],
): Promise<Started> {
  const port = await freePort();
  if (name === 'bare') {
    const proc = await startServer({
      name: 'bare',
      args: [...nodeFlags, '--import', 'tsx', join(HERE, 'bare-server.ts'), control],
      env: { PORT: String(port), HOST: '127.0.0.1' },
      cwd: ROOT,
      cpus: serverCpus,
      readyUrl: `http://127.0.0.1:${port}/health`,
    });
    cleanups.unshift(() => proc.stop());
    return { proc, peer: await hub.peer('bare'), port, sessionIds: [] };
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-sse-data-'));
  cleanups.unshift(async () => rmSync(dataDir, { recursive: true, force: true }));
  const db = await createTestDatabase('bench_sse');
  cleanups.unshift(() => db.drop());
  const env: Record<string, string> = {
    HOST: '127.0.0.1',
    PORT: String(port),
    LOG_LEVEL: 'warn',
    BOOTSTRAP_ADMIN_API_KEY: ADMIN_KEY,
    DATA_DIR: dataDir,
    DATABASE_URL: db.url,
    LLMSIM_ENABLED: 'true', // the writer's turns may run on the simulator
    // Room for the benchmark's streams (the limits themselves are not under test) …
    SSE_MAX_PER_SESSION: String(Math.max(100, Math.ceil(fanout) * 2)),
    SSE_MAX_PER_ORG: String(Math.max(10_000, N * 2)),
    SSE_MAX_GLOBAL: String(Math.max(100_000, N * 2)),
    // … and no connection cycling during the run, so "held" means held. Heartbeats stay at the default.
    SSE_CYCLE_MS: String(3_600_000),
  };
  if (args.experiment) env['BENCH_EXPERIMENT'] = args.experiment;
  if (mode === 'nats') {
    const nats = await startNatsServer();
    cleanups.unshift(() => nats.stop());
    Object.assign(env, natsServiceEnv(nats)); // NATS_URL, and TLS files under NATS_TEST_SECURE=1
    env['SECRETS_ENCRYPTION_KEY'] = `bench:${randomBytes(32).toString('base64')}`;
  }
  log(`starting the service (${mode}) …`);
  const proc = await startServer({
    name: 'service',
    args: [...nodeFlags, '--import', 'tsx', join(HERE, 'server.ts'), control],
    env,
    cwd: ROOT,
    cpus: serverCpus,
    readyUrl: `http://127.0.0.1:${port}/health`,
    readyTimeoutMs: 120_000,
  });
  cleanups.unshift(() => proc.stop(20_000));
  const peer = await hub.peer('service');
  log(`creating ${S} sessions …`);
  const sessionIds = await createSessions(`http://127.0.0.1:${port}`, S);
  await peer.call('sessions', { ids: sessionIds });
  const dbName = new URL(db.url).pathname.slice(1);
  const stat = new pg.Client({ connectionString: TEST_PG_URL });
  await stat.connect();
  cleanups.unshift(() => stat.end());
  const dbStatements = async () => {
    // Pending backend statistics reach pg_stat_database within about a second.
    const r = await stat.query<{ n: string }>('select xact_commit + xact_rollback as n from pg_stat_database where datname = $1', [dbName]);
    return Number(r.rows[0]?.n ?? 0);
  };
  return { proc, peer, port, sessionIds, dbStatements };
}

/**
 * Peak throughput over the steps: per step the smaller of what the server sent and what the
 * clients received in the window (past saturation a client still draining an earlier backlog
 * can receive more than was sent in the window, and a server can send more than arrives).
 */
function maxDelivered(steps: Step[]): number {
  return Math.round(Math.max(0, ...steps.map((s) => Math.min(s.deliveredPerSec, s.appendedPerSec * fanout))));
}

function fmtStep(s: Step): string {
  return (
    `offered ${s.offeredDeliveriesPerSec.toLocaleString('en-US').padStart(7)}/s  sent ${Math.round(s.appendedPerSec * fanout)
      .toLocaleString('en-US')
      .padStart(7)}/s  ` +
    `delivered ${s.deliveredPerSec.toLocaleString('en-US').padStart(7)}/s  p50 ${s.latencyMs.p50} ms  p99 ${s.latencyMs.p99} ms  max ${s.latencyMs.max} ms  ` +
    `server CPU ${pct(s.serverCpuShare)}  machine ${pct(s.machineBusyShare)} (before: ${pct(s.backgroundBusyShare)})` +
    (s.appendMs ? `  append p50 ${s.appendMs.p50} p99 ${s.appendMs.p99} ms` : '') +
    (s.dbTransactionsPerSec !== null ? `  DB ${s.dbTransactionsPerSec} tx/s` : '') +
    (s.appendsShed || s.appendsFailed ? `  shed ${s.appendsShed} failed ${s.appendsFailed}` : '')
  );
}

interface StepContext {
  name: TargetName;
  proc: Proc;
  peer: Peer;
  clients: Peer[];
  dbStatements?: () => Promise<number>;
}

interface ClientReport {
  windowMs: number;
  delivered: number;
  bytes: number;
  hist: [number, number][];
  open: number;
  closedAfterOpen: number;
  failed: number;
}

interface ServerStats {
  windowMs: number;
  streams: number;
  published: number;
  appendsInFlight: number;
  failed: number;
  shed: number;
  lastError?: string | null;
  appendHist?: [number, number][];
}

async function runStep(
  { name, proc, peer, clients, dbStatements }: StepContext,
  rate: number,
  profileFile: string | undefined,
): Promise<Step> {
  const quiet = await waitForQuiet(0.15, quietWaitMs);
  const appendsPerSec = rate / fanout;
  const method = name === 'bare' ? 'publish' : 'append';
  const t0 = performance.now();
  let sent = 0;
  const ticker = setInterval(() => {
    const due = Math.floor((appendsPerSec * (performance.now() - t0)) / 1000);
    if (due > sent) {
      peer.notify(method, { n: due - sent });
      sent = due;
    }
  }, tickMs);
  try {
    await sleep(warmupS * 1000);
    await Promise.all([...clients.map((c) => c.call('reset', { target: name })), peer.call('resetCounters')]);
    if (profileFile) await peer.call('profileStart');
    const cpu0 = proc.cpuSeconds();
    const sys0 = readSystemCpu();
    const db0 = await dbStatements?.();
    const w0 = performance.now();
    await sleep(durationS * 1000);
    const [reports, stats] = await Promise.all([
      Promise.all(clients.map((c) => c.call<ClientReport>('report', { target: name }))),
      peer.call<ServerStats>('stats'),
    ]);
    const windowS = (performance.now() - w0) / 1000;
    const cpu1 = proc.cpuSeconds();
    const sys1 = readSystemCpu();
    const db1 = await dbStatements?.();
    if (profileFile) await peer.call('profileStop', { file: profileFile });
    const hist = new Float64Array(BUCKETS);
    // Each process counts over its own window (reset → report), so RPC delays do not skew the rate.
    let deliveredPerSec = 0;
    for (const r of reports) {
      deliveredPerSec += r.delivered / (r.windowMs / 1000);
      mergeSparse(hist, r.hist);
    }
    const p = percentilesMs(hist, [50, 90, 99, 99.9]);
    let appendMs: Step['appendMs'] = null;
    if (stats.appendHist) {
      const ah = new Float64Array(BUCKETS);
      mergeSparse(ah, stats.appendHist);
      const a = percentilesMs(ah, [50, 99]);
      appendMs = { p50: a.values['p50']!, p99: a.values['p99']!, max: a.maxMs };
    }
    return {
      offeredDeliveriesPerSec: rate,
      appendsPerSec: round2(appendsPerSec),
      windowS: round2(windowS),
      appendedPerSec: Math.round(stats.published / (stats.windowMs / 1000)),
      deliveredPerSec: Math.round(deliveredPerSec),
      deliveredShare: round2(deliveredPerSec / rate),
      latencyMs: {
        p50: p.values['p50']!,
        p90: p.values['p90']!,
        p99: p.values['p99']!,
        p999: p.values['p99.9']!,
        max: p.maxMs,
        samples: p.count,
      },
      appendMs,
      dbTransactionsPerSec: db0 !== undefined && db1 !== undefined ? Math.round((db1 - db0) / windowS) : null,
      serverCpuShare: cpu0 !== null && cpu1 !== null ? round2((cpu1 - cpu0) / windowS) : null,
      machineBusyShare: busyShare(sys0, sys1) === null ? null : round2(busyShare(sys0, sys1)!),
      backgroundBusyShare: quiet.busy === null ? null : round2(quiet.busy),
      loadavg1: round2(loadavg()[0]!),
      appendsFailed: stats.failed,
      appendsShed: stats.shed,
      streamsAtEnd: stats.streams,
      clientsOpenAtEnd: reports.reduce((a, r) => a + r.open, 0),
    };
  } finally {
    clearInterval(ticker);
    await drain(peer, clients, name);
  }
}

/** Waits until the server has no append in flight and the clients stopped receiving (max 20 s). */
async function drain(peer: Peer, clients: Peer[], name: TargetName): Promise<void> {
  const deadline = Date.now() + 20_000;
  let last = -1;
  while (Date.now() < deadline) {
    const stats = await peer.call<ServerStats>('stats');
    const reports = await Promise.all(clients.map((c) => c.call<ClientReport>('report', { target: name })));
    const got = reports.reduce((a, r) => a + r.delivered, 0);
    if (stats.appendsInFlight === 0 && got === last) return;
    last = got;
    await sleep(500);
  }
}

async function createSessions(base: string, count: number): Promise<string[]> {
  const h = { Authorization: `Bearer ${ADMIN_KEY}`, 'Content-Type': 'application/json' };
  const agentRes = await fetch(`${base}/v1/agents`, {
    method: 'POST',
    headers: h,
    body: JSON.stringify({ name: 'bench-sse', system_prompt: 'benchmark' }),
  });
  const agent = (await agentRes.json()) as { id?: string };
  if (!agentRes.ok || !agent.id) throw new Error(`POST /v1/agents answered ${agentRes.status}: ${JSON.stringify(agent)}`);
  const ids: string[] = new Array(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const res = await fetch(`${base}/v1/sessions`, {
        method: 'POST',
        headers: h,
        body: JSON.stringify({ agent_id: agent.id, title: `bench ${i}` }),
      });
      const body = (await res.json()) as { id?: string };
      if (res.status !== 201 && res.status !== 200) throw new Error(`POST /v1/sessions answered ${res.status}: ${JSON.stringify(body)}`);
      ids[i] = body.id!;
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  return ids;
}

function markdown(results: TargetResult[], rate: number): string {
  const lines = [
    '| target | held / N | RSS per idle stream | offered/s | delivered/s | p50 ms | p99 ms | max ms | server CPU | machine busy |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of results) {
    for (const s of r.steps) {
      lines.push(
        `| ${r.name}${s.offeredDeliveriesPerSec === rate ? ' (R)' : ''} | ${r.connectionsHeldAtEnd.toLocaleString('en-US')} / ${r.connectionsRequested.toLocaleString('en-US')} | ${r.rssPerIdleConnKiB} KiB | ` +
          `${s.offeredDeliveriesPerSec.toLocaleString('en-US')} | ${s.deliveredPerSec.toLocaleString('en-US')} | ${s.latencyMs.p50} | ${s.latencyMs.p99} | ${s.latencyMs.max} | ${pct(s.serverCpuShare)} | ${pct(s.machineBusyShare)} |`,
      );
    }
  }
  return lines.join('\n');
}

function pct(x: number | null): string {
  return x === null ? 'n/a' : `${Math.round(x * 100)} %`;
}

main().catch((err: unknown) => {
  process.stderr.write(`bench/sse-fanout: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
