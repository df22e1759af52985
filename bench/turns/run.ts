/**
 * Turn benchmark (issue 6): K concurrent sessions (default 100) send turns to `llmsim` with
 * zero model latency and one tool call per turn. Reports turns/s and the overhead
 * POST → `turn.completed` received over SSE (p50/p90/p99), per mode:
 *
 *   node --import tsx bench/turns/run.ts [--modes embedded,nats] [--sessions 1,10,100] [--duration 20]
 *        [--warmup 5] [--no-tool] [--turns-per-session 20] [--concurrency 200] [--quiet-wait 60]
 *        [--rate 0] [--cpu-prof] [--no-write]
 *
 * `--rate R` paces the sessions so R turns/s are offered in total (each session sends its next
 * turn every K/R s, at once when behind): overhead below saturation. Default 0: back to back.
 * `embedded`: one process, PGlite, in-process bus (the default of `npm start`).
 * `nats`: PostgreSQL + nats-server (distributed mode), one instance with ROLE=all.
 * Each K in `--sessions` is a separate measured run against the same service (fresh sessions):
 * K=1 shows the overhead of one turn on an idle service, K=100 the throughput under load.
 * The service runs with the Node flags of `npm start` (bench/lib SERVICE_NODE_FLAGS).
 * The service and the load generator (bench/turns/client.ts) are separate processes; PostgreSQL
 * and nats-server run beside them on the same machine. Results: a table on stdout and
 * `bench/results/turns-<date>.json`. See bench/README.md.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { natsServiceEnv, startNatsServer } from '../../test/helpers/nats-server.js';
import { createTestDatabase } from '../../test/helpers/postgres.js';
import { formatProfile, summariseCpuProfile } from '../lib/cpuprofile.js';
import { machineInfo } from '../lib/machine.js';
import { serviceConnections } from '../lib/nats-connz.js';
import {
  SERVICE_NODE_FLAGS,
  cpuDelta,
  freePort,
  readCpuByCmdline,
  readSystemCpu,
  busyShare,
  serviceEnv,
  spawnProcess,
  startServer,
  trackCpu,
  waitForQuiet,
  type Proc,
} from '../lib/process.js';
import type { ClientReport } from './client.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const ADMIN_KEY = 'bench-admin-key-0123456789abcdef';
const MODES = ['embedded', 'nats'] as const;
type Mode = (typeof MODES)[number];
/** The targets in NATS mode. */
const TARGET_TURNS_PER_SEC = 200;
const TARGET_P50_MS = 15;

const { values: args } = parseArgs({
  options: {
    modes: { type: 'string', default: 'embedded,nats' },
    sessions: { type: 'string', default: '1,10,100' },
    duration: { type: 'string', default: '20' },
    warmup: { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '200' },
    'no-tool': { type: 'boolean', default: false },
    'turns-per-session': { type: 'string', default: '20' },
    /** Turns/s offered in total, paced per session (0 = back to back, the default). */
    rate: { type: 'string', default: '0' },
    'quiet-wait': { type: 'string', default: '60' },
    'cpu-prof': { type: 'boolean', default: false },
    'no-write': { type: 'boolean', default: false },
  },
});
const modes = args.modes!.split(',').map((m) => {
  if (!(MODES as readonly string[]).includes(m)) throw new Error(`--modes: unknown mode ${m}`);
  return m as Mode;
});
const sessionCounts = args.sessions!.split(',').map((k) => {
  const n = Number(k);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--sessions: ${k} is not a positive integer`);
  return n;
});
const durationS = Number(args.duration);
const rate = Number(args.rate);
if (!(rate >= 0)) throw new Error(`--rate: ${args.rate} is not a number >= 0`);
const warmupS = Number(args.warmup);
const log = (msg: string) => process.stderr.write(msg + '\n');

interface ModeResult extends ClientReport {
  mode: Mode;
  /** Cores used by the service process during the measured run (1 = one core busy). */
  serviceCpuCores: number | null;
  clientCpuCores: number | null;
  /** Cores used by PostgreSQL backends of the bench database and nats-server. */
  depsCpuCores: number | null;
  /** Share of all CPUs busy during the run (everything on the machine). */
  machineBusyShare: number | null;
  /** Share of all CPUs busy with other work just before the run. */
  backgroundBusyShare: number | null;
  serviceRssKiB: number | null;
  /**
   * NATS messages per turn on the service's connection (nats mode): `sent` = publishes and
   * requests it sent, `received` = replies and deliveries. Independent of other load on the
   * machine, so it compares builds where turns/s cannot.
   */
  natsMsgsPerTurn: { sent: number; received: number } | null;
  profile?: string;
}

interface ConnCounters {
  in: number;
  out: number;
}

/** The monitoring URL of a test nats-server, from the config file the helper writes beside its store. */
function natsMonitorUrl(storeDir: string): string | null {
  const dir = dirname(storeDir);
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.conf'))) {
    const m = /^http:\s*(\S+)$/m.exec(readFileSync(join(dir, f), 'utf8'));
    if (m) return `http://${m[1]}`;
  }
  return null;
}

/** Messages the service's connections sent (server in_msgs) and received (out_msgs) so far. */
async function serviceNatsCounters(monitorUrl: string | null): Promise<ConnCounters | null> {
  const mine = monitorUrl ? await serviceConnections(monitorUrl) : null;
  if (!mine?.length) return null;
  return { in: mine.reduce((n, c) => n + c.in_msgs, 0), out: mine.reduce((n, c) => n + c.out_msgs, 0) };
}

async function runMode(mode: Mode): Promise<ModeResult[]> {
  const cleanups: (() => Promise<unknown>)[] = [];
  try {
    const dataDir = mkdtempSync(join(tmpdir(), 'bench-turns-'));
    cleanups.unshift(async () => rmSync(dataDir, { recursive: true, force: true }));
    const port = await freePort();
    const env = serviceEnv(port, dataDir, ADMIN_KEY, { TURN_CONCURRENCY: args.concurrency!, SSE_MAX_PER_SESSION: '10' });
    const depNeedles: string[] = [];
    let monitorUrl: string | null = null;
    if (mode === 'nats') {
      const db = await createTestDatabase('bench_turns');
      cleanups.unshift(() => db.drop());
      env['DATABASE_URL'] = db.url;
      env['LLMSIM_ENABLED'] = 'true'; // the benchmark's turns run on the simulator
      depNeedles.push(` ${new URL(db.url).pathname.slice(1)} `);
      const nats = await startNatsServer();
      cleanups.unshift(() => nats.stop());
      Object.assign(env, natsServiceEnv(nats)); // NATS_URL, and TLS files under NATS_TEST_SECURE=1
      env['SECRETS_ENCRYPTION_KEY'] = `bench:${randomBytes(32).toString('base64')}`;
      depNeedles.push(dirname(nats.storeDir));
      monitorUrl = natsMonitorUrl(nats.storeDir);
    }
    // The flags of `npm start` and the Docker image: the service as it runs in production.
    const nodeArgs = [...SERVICE_NODE_FLAGS, '--import', 'tsx'];
    let profileDir: string | undefined;
    if (args['cpu-prof']) {
      profileDir = mkdtempSync(join(tmpdir(), 'bench-turns-prof-'));
      nodeArgs.unshift('--cpu-prof', '--cpu-prof-dir', profileDir);
    }
    const base = `http://127.0.0.1:${port}`;
    log(`[${mode}] starting the service …`);
    const service = await startServer({
      name: 'service',
      args: [...nodeArgs, join(ROOT, 'src/main.ts')],
      env,
      cwd: ROOT,
      readyUrl: `${base}/health`,
      readyTimeoutMs: 120_000,
    });
    cleanups.unshift(() => service.stop(20_000));

    const results: ModeResult[] = [];
    for (const sessions of sessionCounts) results.push(await measure(mode, sessions, base, service, depNeedles, monitorUrl));
    await service.stop(20_000);
    if (profileDir) {
      const file = readdirSync(profileDir).find((f) => f.endsWith('.cpuprofile'));
      if (file) results.at(-1)!.profile = formatProfile(summariseCpuProfile(join(profileDir, file), 40), 25);
    }
    return results;
  } finally {
    for (const c of cleanups) await c().catch((err: unknown) => log(`cleanup: ${String(err)}`));
  }
}

/** One measured run with K sessions against a running service. */
async function measure(
  mode: Mode,
  sessions: number,
  base: string,
  service: Proc,
  depNeedles: string[],
  monitorUrl: string | null,
): Promise<ModeResult> {
  const quiet = await waitForQuiet(0.15, Number(args['quiet-wait']) * 1000);
  log(`[${mode}] ${sessions} sessions, ${warmupS} s warm-up + ${durationS} s measured (background busy ${pct(quiet.busy)})`);
  const client = spawnProcess({
    name: 'client',
    args: [
      '--import',
      'tsx',
      join(ROOT, 'bench/turns/client.ts'),
      JSON.stringify({
        base,
        key: ADMIN_KEY,
        sessions,
        warmupS,
        durationS,
        tool: !args['no-tool'],
        turnsPerSession: Number(args['turns-per-session']),
        rate,
      }),
    ],
    cwd: ROOT,
  });
  // Sample CPU over the measured window only (setup and warm-up excluded): the client marks it.
  await waitForLine(client, '"phase":"measure"');
  const svc0 = service.cpuSeconds();
  const cli = trackCpu(client.pid);
  const cli0 = client.cpuSeconds();
  const deps0 = depNeedles.map(readCpuByCmdline);
  const sys0 = readSystemCpu();
  const nats0 = await serviceNatsCounters(monitorUrl);
  const t0 = Date.now();
  await waitForLine(client, '"phase":"done"');
  const nats1 = await serviceNatsCounters(monitorUrl);
  const wall = (Date.now() - t0) / 1000;
  const sys1 = readSystemCpu();
  const svc1 = service.cpuSeconds();
  const cli1 = cli.stop();
  const deps1 = depNeedles.map(readCpuByCmdline);
  const code = await client.exited;
  if (code !== 0) throw new Error(`client exited with ${code}:\n${client.output().slice(-3000)}`);
  const report = JSON.parse(client.stdout().trim().split('\n').at(-1)!) as ClientReport;
  return {
    mode,
    ...report,
    serviceCpuCores: svc0 !== null && svc1 !== null ? round((svc1 - svc0) / wall) : null,
    clientCpuCores: cli0 !== null && cli1 !== null ? round((cli1 - cli0) / wall) : null,
    depsCpuCores: depNeedles.length ? round(deps0.reduce((sum, before, i) => sum + cpuDelta(before, deps1[i]!), 0) / wall) : null,
    machineBusyShare: busyShare(sys0, sys1),
    backgroundBusyShare: quiet.busy,
    serviceRssKiB: service.memory()?.rssKiB ?? null,
    natsMsgsPerTurn:
      nats0 && nats1 && report.turns > 0
        ? { sent: round((nats1.in - nats0.in) / report.turns), received: round((nats1.out - nats0.out) / report.turns) }
        : null,
  };
}

/** Resolves once the process printed a line containing `marker` (or rejects when it exits first). */
async function waitForLine(proc: Proc, marker: string): Promise<void> {
  let exited = false;
  void proc.exited.then(() => (exited = true));
  while (!proc.stdout().includes(marker)) {
    if (exited) throw new Error(`${proc.name} exited before printing ${marker}:\n${proc.output().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}

function pct(share: number | null): string {
  return share === null ? 'n/a' : `${Math.round(share * 100)} %`;
}

async function main(): Promise<void> {
  const machine = machineInfo();
  const results: ModeResult[] = [];
  for (const mode of modes) results.push(...(await runMode(mode)));
  const rows = results.map((r) =>
    [
      r.mode.padEnd(9),
      String(r.sessions).padStart(8),
      String(r.turnsPerSec).padStart(8),
      `${r.overheadMs.p50}`.padStart(7),
      `${r.overheadMs.p90}`.padStart(7),
      `${r.overheadMs.p99}`.padStart(7),
      String(r.busyRetries).padStart(6),
      String(r.errors).padStart(6),
      String(r.serviceCpuCores ?? '-').padStart(7),
      String(r.serviceCpuCores !== null && r.turnsPerSec > 0 ? round((r.serviceCpuCores * 1000) / r.turnsPerSec) : '-').padStart(9),
      String(r.depsCpuCores ?? '-').padStart(6),
      (r.natsMsgsPerTurn ? `${r.natsMsgsPerTurn.sent}/${r.natsMsgsPerTurn.received}` : '-').padStart(11),
      String(r.clientCpuCores ?? '-').padStart(7),
      pct(r.machineBusyShare).padStart(8),
      pct(r.backgroundBusyShare).padStart(6),
    ].join(' '),
  );
  process.stdout.write(
    (rate > 0 ? `offered ${rate} turns/s in total (paced)\n` : '') +
      [
        'mode      sessions  turns/s  p50 ms  p90 ms  p99 ms   409s errors svc cpu ms/turn¹  deps nats msgs² cli cpu machine   bg',
        ...rows,
      ].join('\n') +
      '\n',
  );
  process.stdout.write('¹ service CPU time per turn (service cores / turns per second), the figure least disturbed by other load\n');
  process.stdout.write('² NATS messages per turn the service sent / received (its connection on the server), independent of other load\n');
  const nats = results.filter((r) => r.mode === 'nats').at(-1);
  const natsIdle = results.filter((r) => r.mode === 'nats')[0];
  if (nats && rate > 0) {
    // Paced: throughput is whatever was offered; the question is the overhead at that load.
    process.stdout.write(
      `NATS paced at ${rate} turns/s: ${nats.turnsPerSec} turns/s served, p50 ${nats.overheadMs.p50} ms at K=${nats.sessions} (target <= ${TARGET_P50_MS} ms)\n`,
    );
  } else if (nats) {
    process.stdout.write(
      `NATS targets: >= ${TARGET_TURNS_PER_SEC} turns/s → ${nats.turnsPerSec} (${nats.turnsPerSec >= TARGET_TURNS_PER_SEC ? 'met' : 'NOT met'}); ` +
        `p50 <= ${TARGET_P50_MS} ms → ${natsIdle!.overheadMs.p50} at K=${natsIdle!.sessions}, ${nats.overheadMs.p50} at K=${nats.sessions}\n`,
    );
  }
  for (const r of results) if (r.profile) process.stdout.write(`\n--- ${r.mode} service CPU profile ---\n${r.profile}\n`);
  if (!args['no-write']) {
    const dir = join(ROOT, 'bench/results');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `turns-${machine.date.replace(/[:.]/g, '-')}.json`);
    writeFileSync(
      file,
      JSON.stringify(
        {
          machine,
          options: {
            sessions: sessionCounts,
            durationS,
            warmupS,
            tool: !args['no-tool'],
            turnsPerSession: Number(args['turns-per-session']),
            rate,
            concurrency: Number(args.concurrency),
            serviceNodeFlags: SERVICE_NODE_FLAGS,
          },
          results,
        },
        null,
        2,
      ) + '\n',
    );
    log(`results: ${file}`);
  }
}

main().catch((err: unknown) => {
  log(`bench failed: ${err instanceof Error ? err.stack : String(err)}`);
  process.exit(1);
});
