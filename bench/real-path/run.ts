/**
 * Real-path turn benchmark (issue 15): a new session per conversation, the `openai_completions`
 * provider (official openai SDK) against a zero-latency OpenAI-compatible fake that streams as
 * the vendor does (or, with `--provider anthropic`, the `anthropic` provider and its SDK against a
 * Messages fake), model → `get_current_time` → model (20-token reply). The service in NATS
 * mode and in embedded mode, and the peers (bench/real-path/peers/: the LangGraph.js dev server
 * at each `--langgraph-jobs` setting, the Mastra server with Memory, and the stateless Mastra
 * agent as the floor) on the same fake, in the same invocation:
 *
 *   node --import tsx bench/real-path/run.ts [--targets nats,embedded,langgraph,mastra,mastra-stateless] [--langgraph-jobs 10,50,200]
 *        [--provider openai|anthropic] [--sessions 1,10,50]
 *        [--duration 20] [--warmup 5] [--rounds 1] [--soak 0] [--soak-sessions 50] [--cpu-prof]
 *        [--prof-dir DIR] [--quiet-wait 30] [--no-peer] [--no-write] [--label name] [--baseline DIR] [--fresh]
 *        [--baseline-node-option FLAG] [--node-option FLAG] [--baseline-env K=V] [--env K=V] [--from-source]
 *
 * The peers' packages are installed (and Mastra's app built) on first use into bench/.cache/<peer>
 * (git-ignored, out of the test run); `--no-peer` skips them. Every process is separate: the service(s), nats-server,
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
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
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
import { langgraphPeer } from './peers/langgraph.js';
import { mastraPeer } from './peers/mastra.js';
import type { Peer, PeerName } from './peers/peer.js';
import { ratios, round2, table, type PointResult, type Target } from './report.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const ADMIN_KEY = 'bench-admin-key-0123456789abcdef';
const VENDOR_KEY = `sk-bench-${randomBytes(12).toString('hex')}`;
const PEERS: Record<PeerName, Peer> = {
  langgraph: langgraphPeer(ROOT),
  mastra: mastraPeer(ROOT, 'mastra'),
  'mastra-stateless': mastraPeer(ROOT, 'mastra-stateless'),
};
const TARGETS: readonly Target[] = ['nats', 'embedded', 'langgraph', 'mastra', 'mastra-stateless'];
const isPeer = (t: Target): t is PeerName => t in PEERS;

const { values: args } = parseArgs({
  options: {
    targets: { type: 'string', default: TARGETS.join(',') },
    /** LangGraph's `--n-jobs-per-worker` settings, each run as its own target (`langgraph@N`): its best is the anchor. */
    'langgraph-jobs': { type: 'string', default: '10,50,200' },
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
    /** Environment for the `--baseline` services instead of `--env` (A/B of a setting: `--baseline .`). */
    'baseline-env': { type: 'string', multiple: true },
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
if (args['no-peer']) targets = targets.filter((t) => !isPeer(t));
const peerSettings = (p: PeerName) =>
  p === 'langgraph' ? args['langgraph-jobs']!.split(',').map((j) => String(positive('langgraph-jobs', j))) : [''];
const sessionCounts = args.sessions!.split(',').map((k) => positive('sessions', k));
const durationS = positive('duration', args.duration!);
const warmupS = Number(args.warmup);
const rounds = positive('rounds', args.rounds!);
const soakS = Number(args.soak);
const soakSessions = positive('soak-sessions', args['soak-sessions']!);
if (args.fresh && args['cpu-prof']) throw new Error('--fresh and --cpu-prof: a profile covers one process; profile without --fresh');

interface Running {
  target: Target;
  /** A peer's client shape and whether it keeps the conversation; absent for ours. */
  peer?: Peer;
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
  extraEnv: string[] = args.env ?? [],
): Promise<Running> {
  const own = ownCleanups();
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-real-path-'));
  own.add(async () => rmSync(dataDir, { recursive: true, force: true }));
  const port = await freePort();
  const env = serviceEnv(port, dataDir, ADMIN_KEY, { TURN_CONCURRENCY: '200', LLM_PROVIDER_ALLOWED_PRIVATE_HOSTS: '127.0.0.1' });
  for (const kv of extraEnv) {
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

/** A peer at one of its settings, or why it cannot run (install, build or start failed). */
async function startPeer(peer: Peer, fakeOrigin: string, setting: string): Promise<Running | string> {
  if (!peer.providers.includes(provider)) return `it does not speak --provider ${provider} here`;
  const why = peer.ensure(log);
  if (why) return why;
  const own = ownCleanups();
  const port = await freePort();
  const label = setting ? `${peer.name}@${setting}` : peer.name;
  log(`[${label}] starting …`);
  try {
    const proc = await peer.start({ fakeOrigin, provider, vendorKey: VENDOR_KEY, port, setting, log });
    own.add(() => proc.stop(10_000));
    return { target: peer.name, peer, label, base: `http://127.0.0.1:${port}`, proc, deps: [], stop: own.stop };
  } catch (err) {
    await own.stop();
    return `it did not start: ${err instanceof Error ? err.message.slice(0, 1500) : String(err)}`;
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

async function measure(s: Running, fake: Proc, sessions: number, round: number, seconds: number, soak: boolean): Promise<PointResult> {
  const quiet = await waitForQuiet(0.15, Number(args['quiet-wait']) * 1000);
  log(
    `[${s.label}] K=${sessions}${soak ? ' (soak)' : ''}, ${warmupS} s warm-up + ${seconds} s measured (background busy ${quiet.busy === null ? 'n/a' : Math.round(quiet.busy * 100) + ' %'})`,
  );
  const opts: RealPathClientOptions = {
    target: s.peer?.client.target ?? 'ours',
    base: s.base,
    key: ADMIN_KEY,
    agentId: s.peer?.client.agentId ?? s.agentId,
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
    ...(s.peer ? { peer: s.peer.keepsConversation ? ('conversation' as const) : ('stateless' as const) } : {}),
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

  const peerProblems: Record<string, string> = {};
  /** Every target (and baseline) of the run, started; a peer left out when it cannot run. */
  const startAll = async (): Promise<Running[]> => {
    const running: Running[] = [];
    for (const t of targets) {
      if (isPeer(t)) {
        for (const setting of peerSettings(t)) {
          const label = setting ? `${t}@${setting}` : t;
          if (peerProblems[label]) continue;
          const peer = await startPeer(PEERS[t], fakeOrigin, setting);
          if (typeof peer === 'string') {
            peerProblems[label] = peer;
            log(`[${label}] not run: ${peer}`);
          } else running.push(peer);
        }
      } else {
        running.push(await startService(t, fakeOrigin));
        if (args.baseline) {
          const flags = args['baseline-node-option'] ?? args['node-option'];
          const env = args['baseline-env'] ?? args.env;
          running.push(await startService(t, fakeOrigin, resolve(args.baseline), `${t}-base`, flags, env));
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
  for (const [label, why] of Object.entries(peerProblems)) process.stdout.write(`peer ${label} not run: ${why}\n`);
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
          command: `node --import tsx bench/real-path/run.ts ${process.argv.slice(2).join(' ')}`.trim(),
          options: {
            targets,
            langgraphJobs: peerSettings('langgraph'),
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
          peerProblems,
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
