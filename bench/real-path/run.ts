/**
 * Real-path turn benchmark (issue 15): a new session per conversation, the `openai_completions`
 * provider (official openai SDK) against a zero-latency OpenAI-compatible fake that streams as
 * the vendor does (or, with `--provider anthropic`, the `anthropic` provider and its SDK against a
 * Messages fake), model → `get_current_time` → model (20-token reply). The service in NATS
 * mode and in embedded mode, and the LangGraph.js dev server (the peer) on the same fake, in
 * the same invocation:
 *
 *   node --import tsx bench/real-path/run.ts [--targets nats,embedded,langgraph] [--provider openai|anthropic] [--sessions 1,10,50]
 *        [--duration 20] [--warmup 5] [--rounds 1] [--soak 0] [--soak-sessions 50] [--cpu-prof]
 *        [--prof-dir DIR] [--quiet-wait 30] [--no-peer] [--no-write] [--label name] [--baseline DIR] [--fresh]
 *        [--baseline-node-option FLAG] [--node-option FLAG] [--from-source]
 *
 * The peer's packages are installed on first use into bench/.cache/langgraph (git-ignored, out of
 * the test run); `--no-peer` skips it. Every process is separate: the service(s), nats-server,
 * PostgreSQL, the fake LLM (bench/real-path/fake-llm.ts), the peer and the load generator
 * (bench/real-path/client.ts, one per measured point). CPU is read from /proc over the measured
 * window only. `--soak S` adds one S-second run per target at `--soak-sessions` with the
 * service's RSS sampled every 10 s. `--baseline DIR` also runs each of our modes from another checkout
 * (`<mode>-base`, e.g. a worktree at an earlier commit), alternating with this one: before/after
 * figures measured in the same run. `--fresh` starts every target afresh for each point (and the
 * soak), so none carries the threads, runs or sessions of the points before it. Our services run
 * the bundle `npm start` runs (built first when stale); `--from-source` runs src/main.ts through
 * tsx instead, for profiles that name src/ files. Results: a table on stdout and
 * `bench/results/real-path-<date>.json`. See bench/README.md ("Real path").
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
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
  cpuDelta,
  freePort,
  onInterrupt,
  readCpuByCmdline,
  readSystemCpu,
  readTreeCpu,
  readTreeRssKiB,
  serviceEnv,
  spawnProcess,
  startServer,
  trackCpu,
  waitForQuiet,
  type Proc,
} from '../lib/process.js';
import { apiJson } from '../lib/api-json.js';
import type { RealPathClientOptions, RealPathClientReport } from './client.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const PEER_DIR = join(ROOT, 'bench/.cache/langgraph');
const PEER_PACKAGES = [
  '@langchain/langgraph-cli@1.5.1',
  '@langchain/langgraph@1.7.3',
  '@langchain/openai',
  '@langchain/anthropic',
  '@langchain/core',
  'zod',
];
const ADMIN_KEY = 'bench-admin-key-0123456789abcdef';
const VENDOR_KEY = `sk-bench-${randomBytes(12).toString('hex')}`;
const TARGETS = ['nats', 'embedded', 'langgraph'] as const;
type Target = (typeof TARGETS)[number];

const { values: args } = parseArgs({
  options: {
    targets: { type: 'string', default: 'nats,embedded,langgraph' },
    /** The vendor API every target talks to: `openai` (Chat Completions) or `anthropic` (Messages). */
    provider: { type: 'string', default: 'openai' },
    sessions: { type: 'string', default: '1,10,50' },
    duration: { type: 'string', default: '20' },
    warmup: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '1' },
    soak: { type: 'string', default: '0' },
    'soak-sessions': { type: 'string', default: '50' },
    'quiet-wait': { type: 'string', default: '30' },
    'cpu-prof': { type: 'boolean', default: false },
    'prof-dir': { type: 'string' },
    'no-peer': { type: 'boolean', default: false },
    'no-write': { type: 'boolean', default: false },
    label: { type: 'string', default: '' },
    /** Another checkout of the service (e.g. a worktree at an earlier commit): each of our modes runs from both, as `<mode>` and `<mode>-base`. */
    baseline: { type: 'string' },
    /** Extra environment for our services, `K=V`, repeatable (e.g. `--env MALLOC_ARENA_MAX=2`). */
    env: { type: 'string', multiple: true, default: [] },
    /** Extra Node flags for our services, repeatable. */
    'node-option': { type: 'string', multiple: true, default: [] },
    /** Node flags for the `--baseline` services instead of `--node-option` (A/B of a flag: `--baseline .`). */
    'baseline-node-option': { type: 'string', multiple: true },
    /** Our services log process.memoryUsage() and /proc smaps_rollup every 10 s into DIR/<label>.jsonl (bench/real-path/mem-sampler.ts). */
    'mem-log': { type: 'string' },
    /** Start every target afresh (new process, database, NATS server, data dir) for each point, so no target carries the state of earlier points (the peer's in-memory server keeps every thread and run). */
    fresh: { type: 'boolean', default: false },
    /** Run our services from src/ through tsx instead of the bundle `npm start` runs, so profiles name src/ files. */
    'from-source': { type: 'boolean', default: false },
  },
});
const log = (msg: string) => process.stderr.write(msg + '\n');
const positive = (name: string, v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name}: ${v} is not a positive integer`);
  return n;
};
let targets = args.targets!.split(',').map((t) => {
  if (!(TARGETS as readonly string[]).includes(t)) throw new Error(`--targets: unknown target ${t}`);
  return t as Target;
});
const PROVIDERS = ['openai', 'anthropic'] as const;
if (!(PROVIDERS as readonly string[]).includes(args.provider!))
  throw new Error(`--provider: ${args.provider} is not one of ${PROVIDERS.join(', ')}`);
const provider = args.provider as (typeof PROVIDERS)[number];
if (args['no-peer']) targets = targets.filter((t) => t !== 'langgraph');
const sessionCounts = args.sessions!.split(',').map((k) => positive('sessions', k));
const durationS = positive('duration', args.duration!);
const warmupS = Number(args.warmup);
const rounds = positive('rounds', args.rounds!);
const soakS = Number(args.soak);
const soakSessions = positive('soak-sessions', args['soak-sessions']!);
if (args.fresh && args['cpu-prof']) throw new Error('--fresh and --cpu-prof: a profile covers one process; profile without --fresh');

interface Running {
  target: Target;
  /** `nats`, `nats-base` (--baseline), … */
  label: string;
  base: string;
  proc: Proc;
  /** ours: the agent every session uses. */
  agentId?: string;
  /** `needle`s of the processes serving it besides itself (PostgreSQL backends, nats-server). */
  deps: { name: 'postgres' | 'nats'; needle: string }[];
  profileDir?: string;
  /** Stops it and everything started for it (database, nats-server, data dir); idempotent. */
  stop: () => Promise<void>;
}

interface PointResult extends Omit<RealPathClientReport, 'target'> {
  target: Target;
  label: string;
  round: number;
  soak: boolean;
  /** Service (or peer process tree) CPU ms per turn, from /proc over the measured window. */
  cpuMsPerTurn: number | null;
  cores: number | null;
  postgresMsPerTurn: number | null;
  natsMsPerTurn: number | null;
  fakeLlmMsPerTurn: number | null;
  clientCores: number | null;
  /** RSS (KiB) of the service (the peer: its whole process tree) at the start and end of the window, and its peak. */
  rssKiB: { start: number | null; end: number | null; max: number | null; samples: [number, number][] };
  machineBusy: number | null;
  backgroundBusy: number | null;
}

/** The peer's packages, installed into bench/.cache/langgraph on first use; null = ready, else why not. */
function ensurePeer(): string | null {
  mkdirSync(PEER_DIR, { recursive: true });
  for (const f of ['graph.mjs', 'langgraph.json']) copyFileSync(join(ROOT, 'bench/real-path/peer', f), join(PEER_DIR, f));
  const installed = ['@langchain/langgraph-cli/dist/cli/cli.mjs', '@langchain/anthropic/package.json'];
  if (installed.every((f) => existsSync(join(PEER_DIR, 'node_modules', f)))) return null;
  writeFileSync(join(PEER_DIR, 'package.json'), JSON.stringify({ name: 'real-path-peer', private: true, type: 'module' }) + '\n');
  log(`[langgraph] installing ${PEER_PACKAGES.join(' ')} into ${PEER_DIR} …`);
  const r = spawnSync('npm', ['install', '--no-audit', '--no-fund', ...PEER_PACKAGES], {
    cwd: PEER_DIR,
    encoding: 'utf8',
    timeout: 600_000,
  });
  if (r.status !== 0)
    return `npm install failed (${r.status ?? r.signal ?? r.error?.message}): ${(r.stderr || r.stdout || '').slice(-1500)}`;
  return null;
}

const json = (method: string, url: string, body: unknown, key = ADMIN_KEY) => apiJson(method, url, body, key);

/** Provider (openai_completions or anthropic → the fake), model, agent with current_time and that model. */
async function setUpService(base: string, fakeOrigin: string): Promise<string> {
  const created = await json(
    'POST',
    `${base}/v1/llm-providers`,
    provider === 'anthropic'
      ? { name: 'fake', provider_type: 'anthropic', api_key: VENDOR_KEY, base_url: fakeOrigin }
      : { name: 'fake', provider_type: 'openai_completions', api_key: VENDOR_KEY, base_url: `${fakeOrigin}/v1` },
  );
  const model = await json('POST', `${base}/v1/llm-providers/${created.id}/models`, { model_id: 'gpt-bench' });
  const agent = await json('POST', `${base}/v1/agents`, {
    name: 'bench-real-path',
    system_prompt: 'You are a benchmark agent.',
    capabilities: ['current_time'],
    default_model_id: model.id,
  });
  return agent.id as string;
}

const cleanups: (() => Promise<unknown>)[] = [];
onInterrupt(async () => {
  for (const c of cleanups) await c().catch(() => undefined);
});

/** A target's own cleanups, run newest first by `stop` (once), which the run's cleanups also call. */
function ownCleanups(): { add: (c: () => Promise<unknown>) => void; stop: () => Promise<void> } {
  const own: (() => Promise<unknown>)[] = [];
  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      for (const c of own) await c().catch((err: unknown) => log(`cleanup: ${String(err)}`));
    })());
  cleanups.unshift(stop);
  return { add: (c) => own.unshift(c), stop };
}

async function startService(
  target: 'nats' | 'embedded',
  fakeOrigin: string,
  root = ROOT,
  label: string = target,
  extraFlags: string[] = args['node-option'] ?? [],
): Promise<Running> {
  const own = ownCleanups();
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-real-path-'));
  own.add(async () => rmSync(dataDir, { recursive: true, force: true }));
  const port = await freePort();
  const env = serviceEnv(port, dataDir, ADMIN_KEY, { TURN_CONCURRENCY: '200', LLM_PROVIDER_ALLOWED_PRIVATE_HOSTS: '127.0.0.1' });
  for (const kv of args.env ?? []) {
    const eq = kv.indexOf('=');
    if (eq < 1) throw new Error(`--env: ${kv} is not K=V`);
    env[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  const deps: Running['deps'] = [];
  if (target === 'nats') {
    const db = await createTestDatabase('bench_real_path');
    own.add(() => db.drop());
    env['DATABASE_URL'] = db.url;
    env['LLMSIM_ENABLED'] = 'true'; // the benchmark's turns run on the simulator
    deps.push({ name: 'postgres', needle: ` ${new URL(db.url).pathname.slice(1)} ` });
    const nats = await startNatsServer();
    own.add(() => nats.stop());
    Object.assign(env, natsServiceEnv(nats));
    env['SECRETS_ENCRYPTION_KEY'] = `bench:${randomBytes(32).toString('base64')}`;
    deps.push({ name: 'nats', needle: dirname(nats.storeDir) });
  }
  const nodeArgs = [...SERVICE_NODE_FLAGS, ...extraFlags, ...(args['from-source'] ? ['--import', 'tsx'] : [])];
  if (args['mem-log']) {
    mkdirSync(args['mem-log'], { recursive: true });
    env['BENCH_MEM_LOG'] = join(resolve(args['mem-log']), `${label}.jsonl`);
    nodeArgs.push('--import', join(ROOT, 'bench/real-path/mem-sampler.ts'));
  }
  let profileDir: string | undefined;
  if (args['cpu-prof']) {
    profileDir = join(args['prof-dir'] ?? mkdtempSync(join(tmpdir(), 'bench-real-path-prof-')), label);
    mkdirSync(profileDir, { recursive: true });
    nodeArgs.unshift('--cpu-prof', '--cpu-prof-dir', profileDir);
  }
  const base = `http://127.0.0.1:${port}`;
  if (!args['from-source']) buildIfStale(root);
  log(`[${label}] starting the service from ${root} …`);
  const proc = await startServer({
    name: label,
    args: [...nodeArgs, join(root, args['from-source'] ? 'src/main.ts' : SERVICE_ENTRY)],
    env,
    cwd: root,
    readyUrl: `${base}/health`,
    readyTimeoutMs: 120_000,
  });
  own.add(() => proc.stop(20_000));
  const agentId = await setUpService(base, fakeOrigin);
  return { target, label, base, proc, agentId, deps, profileDir, stop: own.stop };
}

async function startPeer(fakeOrigin: string): Promise<Running | string> {
  const why = ensurePeer();
  if (why) return why;
  const own = ownCleanups();
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  log('[langgraph] starting the LangGraph.js dev server …');
  try {
    const proc = await startServer({
      name: 'langgraph',
      args: [
        join(PEER_DIR, 'node_modules/@langchain/langgraph-cli/dist/cli/cli.mjs'),
        'dev',
        '--port',
        String(port),
        '--host',
        '127.0.0.1',
        '--no-browser',
        '--no-reload',
        // The default (10) would cap the peer at 10 runs at a time; K goes to 50+.
        '--n-jobs-per-worker',
        '200',
      ],
      env: {
        BENCH_PROVIDER: provider,
        BENCH_OPENAI_BASE_URL: `${fakeOrigin}/v1`,
        BENCH_ANTHROPIC_BASE_URL: fakeOrigin,
        BENCH_API_KEY: VENDOR_KEY,
        LANGSMITH_TRACING: 'false',
        LANGCHAIN_TRACING_V2: 'false',
        NO_COLOR: '1',
        BROWSER: 'none',
      },
      cwd: PEER_DIR,
      readyUrl: `${base}/ok`,
      readyTimeoutMs: 120_000,
    });
    own.add(() => proc.stop(10_000));
    return { target: 'langgraph', label: 'langgraph', base, proc, deps: [], stop: own.stop };
  } catch (err) {
    return `the dev server did not start: ${err instanceof Error ? err.message.slice(0, 1500) : String(err)}`;
  }
}

async function waitForLine(proc: Proc, marker: string): Promise<void> {
  let exited = false;
  void proc.exited.then(() => (exited = true));
  while (!proc.stdout().includes(marker)) {
    if (exited) throw new Error(`${proc.name} exited before printing ${marker}:\n${proc.output().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const round2 = (n: number) => Math.round(n * 100) / 100;

async function measure(s: Running, fake: Proc, sessions: number, round: number, seconds: number, soak: boolean): Promise<PointResult> {
  const quiet = await waitForQuiet(0.15, Number(args['quiet-wait']) * 1000);
  log(
    `[${s.label}] K=${sessions}${soak ? ' (soak)' : ''}, ${warmupS} s warm-up + ${seconds} s measured (background busy ${quiet.busy === null ? 'n/a' : Math.round(quiet.busy * 100) + ' %'})`,
  );
  const opts: RealPathClientOptions = {
    target: s.target === 'langgraph' ? 'langgraph' : 'ours',
    base: s.base,
    key: ADMIN_KEY,
    agentId: s.agentId,
    sessions,
    warmupS,
    durationS: seconds,
  };
  const client = spawnProcess({
    name: 'client',
    args: ['--import', 'tsx', join(ROOT, 'bench/real-path/client.ts'), JSON.stringify(opts)],
    cwd: ROOT,
  });
  await waitForLine(client, '"phase":"measure"');
  const t0 = Date.now();
  const svc0 = readTreeCpu(s.proc.pid);
  const deps0 = s.deps.map((d) => readCpuByCmdline(d.needle));
  const fake0 = fake.cpuSeconds();
  const cli = trackCpu(client.pid);
  const cli0 = client.cpuSeconds();
  const sys0 = readSystemCpu();
  const samples: [number, number][] = [];
  const sample = () => {
    const rss = readTreeRssKiB(s.proc.pid);
    if (rss !== null) samples.push([Math.round((Date.now() - t0) / 1000), rss]);
  };
  sample();
  const timer = setInterval(sample, soak ? 10_000 : 1000);
  try {
    await waitForLine(client, '"phase":"done"');
  } finally {
    clearInterval(timer);
  }
  sample();
  const wall = (Date.now() - t0) / 1000;
  const sys1 = readSystemCpu();
  const svc1 = readTreeCpu(s.proc.pid);
  const deps1 = s.deps.map((d) => readCpuByCmdline(d.needle));
  const fake1 = fake.cpuSeconds();
  const cli1 = cli.stop();
  const code = await client.exited;
  if (code !== 0) throw new Error(`client exited with ${code}:\n${client.output().slice(-3000)}`);
  const report = JSON.parse(client.stdout().trim().split('\n').at(-1)!) as RealPathClientReport;
  const perTurn = (cpuS: number | null) => (cpuS !== null && report.turns > 0 ? round2((cpuS * 1000) / report.turns) : null);
  const dep = (name: 'postgres' | 'nats') => {
    const i = s.deps.findIndex((d) => d.name === name);
    return i < 0 ? null : perTurn(cpuDelta(deps0[i]!, deps1[i]!));
  };
  const svcCpu = cpuDelta(svc0, svc1);
  const rss = samples.map((x) => x[1]);
  return {
    ...report,
    target: s.target,
    label: s.label,
    round,
    soak,
    cpuMsPerTurn: perTurn(svcCpu),
    cores: round2(svcCpu / wall),
    postgresMsPerTurn: dep('postgres'),
    natsMsPerTurn: dep('nats'),
    fakeLlmMsPerTurn: fake0 !== null && fake1 !== null ? perTurn(fake1 - fake0) : null,
    clientCores: cli0 !== null && cli1 !== null ? round2((cli1 - cli0) / wall) : null,
    rssKiB: { start: rss[0] ?? null, end: rss.at(-1) ?? null, max: rss.length ? Math.max(...rss) : null, samples },
    machineBusy: busyShare(sys0, sys1),
    backgroundBusy: quiet.busy,
  };
}

const mb = (kib: number | null) => (kib === null ? '-' : String(Math.round(kib / 1024)));

function table(results: PointResult[]): string {
  const head =
    'target         K  turns/s  turn p50  turn p99  conv p50  svc ms/turn¹  pg ms  nats ms  all ms²  cores  RSS MB start→end (max)  errors  machine';
  const rows = results.map((r) => {
    const all = r.cpuMsPerTurn === null ? null : round2(r.cpuMsPerTurn + (r.postgresMsPerTurn ?? 0) + (r.natsMsPerTurn ?? 0));
    return [
      (r.soak ? `${r.label}*` : r.label).padEnd(13),
      String(r.sessions).padStart(3),
      String(r.turnsPerSec).padStart(8),
      String(r.turnMs.p50).padStart(9),
      String(r.turnMs.p99).padStart(9),
      String(r.conversationMs.p50).padStart(9),
      String(r.cpuMsPerTurn ?? '-').padStart(13),
      String(r.postgresMsPerTurn ?? '-').padStart(6),
      String(r.natsMsPerTurn ?? '-').padStart(8),
      String(all ?? '-').padStart(8),
      String(r.cores ?? '-').padStart(6),
      `${mb(r.rssKiB.start)}→${mb(r.rssKiB.end)} (${mb(r.rssKiB.max)})`.padStart(24),
      String(r.errors).padStart(7),
      (r.machineBusy === null ? '-' : `${Math.round(r.machineBusy * 100)} %`).padStart(8),
    ].join(' ');
  });
  return [head, ...rows].join('\n');
}

/** Ours against the peer at the same K and round: turns/s, CPU per turn and p50 ratios. */
function ratios(results: PointResult[]): string[] {
  const out: string[] = [];
  for (const r of results) {
    if (r.target === 'langgraph') continue;
    const peer = results.find((p) => p.target === 'langgraph' && p.sessions === r.sessions && p.round === r.round && p.soak === r.soak);
    if (!peer?.turnsPerSec) continue;
    const all = (r.cpuMsPerTurn ?? 0) + (r.postgresMsPerTurn ?? 0) + (r.natsMsPerTurn ?? 0);
    out.push(
      `${r.label} K=${r.sessions}${r.soak ? ' soak' : ''} round ${r.round}: turns/s ×${round2(r.turnsPerSec / peer.turnsPerSec)}, ` +
        `service CPU/turn ×${peer.cpuMsPerTurn ? round2((r.cpuMsPerTurn ?? NaN) / peer.cpuMsPerTurn) : '-'}, ` +
        `all our processes ×${peer.cpuMsPerTurn ? round2(all / peer.cpuMsPerTurn) : '-'}, ` +
        `turn p50 ×${round2(r.turnMs.p50 / peer.turnMs.p50)} (conversation p50 ×${round2(r.conversationMs.p50 / peer.conversationMs.p50)})`,
    );
  }
  // --baseline: this checkout against the other one, per mode, K and round.
  for (const b of results.filter((r) => r.label.endsWith('-base'))) {
    const r = results.find((x) => x.label === b.target && x.sessions === b.sessions && x.round === b.round && x.soak === b.soak);
    if (!r || !b.turnsPerSec || !b.cpuMsPerTurn) continue;
    out.push(
      `${b.target} K=${b.sessions} round ${b.round}, this checkout / baseline: turns/s ×${round2(r.turnsPerSec / b.turnsPerSec)}, ` +
        `service CPU/turn ${b.cpuMsPerTurn} → ${r.cpuMsPerTurn} ms (×${round2((r.cpuMsPerTurn ?? NaN) / b.cpuMsPerTurn)})`,
    );
  }
  return out;
}

async function main(): Promise<void> {
  const machine = machineInfo();
  const fake = spawnProcess({
    name: 'fake-llm',
    args: ['--import', 'tsx', join(ROOT, 'bench/real-path/fake-llm.ts'), JSON.stringify({ apiKey: VENDOR_KEY, provider })],
    cwd: ROOT,
  });
  cleanups.unshift(() => fake.stop(5000));
  await waitForLine(fake, '"port"');
  const fakeOrigin = `http://127.0.0.1:${JSON.parse(fake.stdout().split('\n')[0]!).port}`;

  let peerProblem: string | null = null;
  /** Every target (and baseline) of the run, started; the peer left out when it cannot run. */
  const startAll = async (): Promise<Running[]> => {
    const running: Running[] = [];
    for (const t of targets) {
      if (t === 'langgraph') {
        if (peerProblem) continue;
        const peer = await startPeer(fakeOrigin);
        if (typeof peer === 'string') {
          peerProblem = peer;
          log(`[langgraph] not run: ${peer}`);
        } else running.push(peer);
      } else {
        running.push(await startService(t, fakeOrigin));
        if (args.baseline) {
          const flags = args['baseline-node-option'] ?? args['node-option'];
          running.push(await startService(t, fakeOrigin, resolve(args.baseline), `${t}-base`, flags));
        }
      }
    }
    return running;
  };
  const stopAll = (running: Running[]) => Promise.all(running.map((s) => s.stop()));

  const results: PointResult[] = [];
  let running = await startAll();
  const points = [
    ...sessionCounts.map((k) => ({ k, seconds: durationS, soak: false })),
    ...(soakS > 0 ? [{ k: soakSessions, seconds: soakS, soak: true }] : []),
  ];
  for (const [i, { k, seconds, soak }] of points.entries()) {
    if (args.fresh && i > 0) {
      await stopAll(running);
      running = await startAll();
    }
    if (soak) {
      for (const s of running) results.push(await measure(s, fake, k, 1, seconds, true));
      continue;
    }
    for (let round = 1; round <= rounds; round++) {
      // Alternate the order between rounds (us / peer / us / peer).
      const order = round % 2 ? running : [...running].reverse();
      for (const s of order) results.push(await measure(s, fake, k, round, seconds, false));
    }
  }

  const profiles: Record<string, string> = {};
  for (const s of running) {
    if (!s.profileDir) continue;
    await s.proc.stop(20_000);
    const file = readdirSync(s.profileDir).find((f) => f.endsWith('.cpuprofile'));
    if (file) profiles[s.label] = formatProfile(summariseCpuProfile(join(s.profileDir, file), 40, { fromMs: 10_000 }), 30);
    log(`[${s.label}] profile: ${s.profileDir}/${file}`);
  }

  process.stdout.write(table(results) + '\n');
  process.stdout.write('¹ CPU of the service process (the peer: its whole process tree) per turn, from /proc over the measured window\n');
  process.stdout.write('² service + PostgreSQL backends of its database + nats-server, per turn; * = soak run\n');
  for (const line of ratios(results)) process.stdout.write(line + '\n');
  if (peerProblem) process.stdout.write(`LangGraph peer not run: ${peerProblem}\n`);
  for (const [t, p] of Object.entries(profiles)) process.stdout.write(`\n--- ${t} service CPU profile ---\n${p}\n`);
  if (!args['no-write']) {
    const dir = join(ROOT, 'bench/results');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `real-path-${machine.date.replace(/[:.]/g, '-')}${args.label ? '-' + args.label : ''}.json`);
    writeFileSync(
      file,
      JSON.stringify(
        {
          machine,
          options: {
            targets,
            baseline: args.baseline ?? null,
            sessions: sessionCounts,
            durationS,
            warmupS,
            rounds,
            soakS,
            soakSessions,
            fresh: args.fresh,
            fromSource: args['from-source'],
            serviceNodeFlags: SERVICE_NODE_FLAGS,
          },
          peerProblem,
          results,
          profiles,
        },
        null,
        2,
      ) + '\n',
    );
    log(`results: ${file}`);
  }
}

main()
  .catch((err: unknown) => {
    log(`bench failed: ${err instanceof Error ? err.stack : String(err)}`);
    process.exitCode = 1;
  })
  .finally(async () => {
    for (const c of cleanups) await c().catch((err: unknown) => log(`cleanup: ${String(err)}`));
    process.exit();
  });
