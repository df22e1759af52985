/**
 * SSE at scale (issue 28 item 1): distributed mode (one nats-server, a fresh PostgreSQL
 * database, N service instances), S sessions × F followers spread over the instances with no
 * affinity, clients in several processes (~8,000 streams each: the descriptor limit is 20,000).
 *
 *   node --import tsx bench/sse-scale/run.ts [--streams 10000,25000,50000] [--followers-per-session 10]
 *        [--instances 3] [--cycling] [--cycle-ms 300000] [--turn-fraction 0.1] [--kill-instance]
 *        [--per-process 8000] [--idle-seconds 20] [--turn-seconds 20] [--turn-text '@tokens 20 delay=100']
 *        [--turn-gap-ms 5000] [--no-bare] [--heap-snapshot] [--label text]
 *
 * Steps (each --streams value, cumulative): streams opened, then an idle window (heartbeats only)
 * → per-instance RSS and CPU against the same window with 0 streams: KiB per idle stream and %
 * of a core per 50k. Then, from the largest step down, turns on a fraction of the sessions for
 * --turn-seconds: delivery latency p50/p99/max (receive − the event's ts). After the largest
 * step's turns every stream is audited against its session's log (lost, duplicated). With
 * --kill-instance the last instance is SIGKILLed halfway through that window: its clients
 * reconnect through the others with Last-Event-ID; the time until every stream is back is
 * reported. Last, the same idle load against as many bare uWebSockets.js SSE servers
 * (bench/sse-fanout/bare-server.ts): the physical limit, ratio ours/bare.
 * Results: bench/results/sse-scale-<stamp>.json and .md.
 */
import { mkdtempSync, mkdirSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { positiveInt } from '../lib/args.js';
import { machineInfo } from '../lib/machine.js';
import { onInterrupt } from '../lib/process.js';
import { createControlHub } from '../sse-fanout/control.js';
import { startBareServers } from './bare.js';
import { ADMIN_KEY, startDeployment } from './deployment.js';
import { startFollowers, type FollowerPool } from './followers.js';
import { writeResults } from './report.js';
import { createSessions, driveTurns, lastSequences } from './turns.js';
import { measureWindow, perStream } from './window.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const HERE = join(ROOT, 'bench/sse-scale');
/** Where --heap-snapshot leaves i1's snapshot (outside the repository: hundreds of MB). */
const HEAP_DIR = join(tmpdir(), 'sse-scale-heap');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const { values: a } = parseArgs({
  options: {
    streams: { type: 'string', default: '10000,25000,50000' },
    'followers-per-session': { type: 'string', default: '10' },
    instances: { type: 'string', default: '3' },
    cycling: { type: 'boolean', default: false },
    'cycle-ms': { type: 'string', default: '300000' },
    'turn-fraction': { type: 'string', default: '0.1' },
    'kill-instance': { type: 'boolean', default: false },
    'per-process': { type: 'string', default: '8000' },
    'idle-seconds': { type: 'string', default: '20' },
    'turn-seconds': { type: 'string', default: '20' },
    'turn-text': { type: 'string', default: '@tokens 20 delay=100' },
    'turn-gap-ms': { type: 'string', default: '5000' },
    'audit-idle-sample': { type: 'string', default: '1000' },
    /** Reconnects wait 100 ms + up to this at random: 100 is EventSource's `retry: 100` herd. */
    'reconnect-spread-ms': { type: 'string', default: '100' },
    'no-bare': { type: 'boolean', default: false },
    'heap-snapshot': { type: 'boolean', default: false },
    label: { type: 'string', default: '' },
  },
});
const steps = a.streams.split(',').map((v) => positiveInt('streams', v));
const N = Math.max(...steps);
const F = positiveInt('followers-per-session', a['followers-per-session']);
const I = positiveInt('instances', a.instances);
const perProcess = positiveInt('per-process', a['per-process']);
const idleSeconds = positiveInt('idle-seconds', a['idle-seconds']);
const turnSeconds = positiveInt('turn-seconds', a['turn-seconds']);
const turnGapMs = positiveInt('turn-gap-ms', a['turn-gap-ms']);
const cycleMs = a.cycling ? positiveInt('cycle-ms', a['cycle-ms']) : 3_600_000;
const turnFraction = Number(a['turn-fraction']);
const S = Math.ceil(N / F);
const t0 = Date.now();
const log = (msg: string) => console.log(`[${((Date.now() - t0) / 1000).toFixed(0).padStart(4)} s] ${msg}`);

const machine = machineInfo();
const loadBefore = loadavg().map((x) => Math.round(x * 100) / 100);
const command = `node --import tsx bench/sse-scale/run.ts ${process.argv.slice(2).join(' ')}`.trim();
log(`${command}\n  ${machine.cpuModel}, ${machine.cpus} cores, load ${loadBefore.join(' ')}, commit ${machine.gitCommit}`);

mkdirSync(HEAP_DIR, { recursive: true });
const controlPath = join(mkdtempSync(join(tmpdir(), 'sse-scale-')), 'control.sock');
const hub = createControlHub(controlPath);
await hub.listen();
const dep = await startDeployment({
  root: ROOT,
  instances: I,
  cycleMs,
  nodeFlags: a['heap-snapshot'] ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${HEAP_DIR}`] : [],
  log,
});
onInterrupt(() => dep.stop());
const bases = dep.instances.map((i) => i.base);
const processes = Math.ceil(N / perProcess);
const pool = await startFollowers({ here: HERE, hub, controlPath, processes, perProcess });
log(`${processes} follower processes`);

const result: any = {
  label: a.label,
  command,
  machine,
  loadBefore,
  options: {
    streams: steps,
    followersPerSession: F,
    instances: I,
    cycling: a.cycling,
    cycleMs,
    turnFraction,
    turnText: a['turn-text'],
    turnGapMs,
    perProcess,
    idleSeconds,
    turnSeconds,
  },
  sessions: S,
  idle: [],
  turns: [],
};

try {
  log(`creating ${S} sessions …`);
  const sessions = await createSessions(bases, ADMIN_KEY, S, log);
  const turnSessions = sessions.slice(0, Math.ceil(S * turnFraction));
  result.turnSessions = turnSessions.length;
  // Stream k follows session k % S on instance (k + k / S) % I: a session's followers spread over the instances.
  const plan = Array.from({ length: N }, (_, k): [string, string, number] => {
    const s = sessions[k % S]!;
    return [s, `/v1/sessions/${s}/sse`, (k + Math.floor(k / S)) % I];
  });
  const perInstance = (n: number) => Array.from({ length: I }, (_, i) => plan.slice(0, n).filter((p) => p[2] === i).length);
  const servers = () => dep.instances.filter((i) => i.proc).map((i) => ({ name: i.name, pid: i.proc!.pid, inspector: i.inspector }));

  await sleep(5000);
  log(`idle window with 0 streams (${idleSeconds} s) …`);
  const base = await measureWindow(servers(), idleSeconds);
  await heapSnapshot('0 streams');
  const opts = {
    ports: dep.instances.map((i) => i.port),
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
    reconnect: true,
    spreadMs: positiveInt('reconnect-spread-ms', a['reconnect-spread-ms']),
  };
  let opened = 0;
  for (const n of steps) {
    log(`opening streams ${opened} → ${n} …`);
    const r = await pool.open(plan.slice(opened, n), opts);
    opened = n;
    log(`  opened ${r.opened}, failed ${r.failed} in ${r.ms} ms ${r.failed ? JSON.stringify(r.failures) : ''}`);
    await sleep(5000);
    const w = await measureWindow(servers(), idleSeconds);
    const ps = perStream(base, w, perInstance(n));
    result.idle.push(ps);
    log(
      `  idle at ${n}: ${ps.total.kibPerStream} KiB RSS/stream (${ps.total.heapKibPerStream} heap), ${ps.total.corePctPer50k} % core per 50k (total); ${ps.rows.map((x) => `${x.name} ${x.rssMiB} MiB ${x.cpuPct} %`).join(', ')}`,
    );
  }
  await heapSnapshot(`${N} streams`);

  if (turnSessions.length) {
    for (const n of [...steps].reverse()) {
      if (n < opened) {
        await pool.trim(n);
        opened = n;
      }
      log(`turns on ${turnSessions.length} sessions with ${n} streams (${turnSeconds} s) …`);
      const before = await pool.report();
      await pool.measure(true);
      const driver = driveTurns(bases, ADMIN_KEY, turnSessions, a['turn-text'], turnGapMs);
      if (a['kill-instance'] && n === N) result.kill = await killOne(pool, n);
      else await sleep(turnSeconds * 1000);
      await driver.stop(4000);
      const after = await pool.report();
      await pool.measure(false);
      const t = { streams: n, delivered: after.delivered - before.delivered, latency: after.latency, posted: driver.posted() };
      result.turns.push(t);
      log(`  ${t.delivered} deliveries, p50 ${t.latency.p50} ms, p99 ${t.latency.p99} ms, max ${t.latency.max} ms; ${t.posted} turns`);
      if (n === N) {
        const idle = sessions
          .slice(turnSessions.length)
          .filter((_, i) => i % Math.max(1, Math.floor((S - turnSessions.length) / Number(a['audit-idle-sample']))) === 0);
        const audited = [...turnSessions, ...idle];
        log(`auditing the streams of ${audited.length} sessions against the log …`);
        await sleep(3000);
        const last = await lastSequences(bases, ADMIN_KEY, audited);
        result.audit = { sessions: Object.keys(last).length, ...(await pool.audit(last)) };
        log(`  ${JSON.stringify(result.audit)}`);
        Object.assign(result, { reconnects: after.reconnects, cycled: after.cycled, failures: after.failures, openAtEnd: after.open });
      }
    }
  }
  await pool.closeAll();
  await dep.stop();

  if (!a['no-bare']) {
    log(`bare uWebSockets.js servers (${I}), same idle load …`);
    const bare = await startBareServers({ root: ROOT, controlPath, count: I });
    try {
      await sleep(3000);
      const bareBase = await measureWindow(bare.procs, idleSeconds);
      const bplan = plan.map(([s, , i]): [string, string, number] => [s, `/s/${s}`, i]);
      result.bareIdle = [];
      let bopened = 0;
      for (const n of steps) {
        const r = await pool.open(bplan.slice(bopened, n), { ports: bare.ports, headers: {}, reconnect: false });
        bopened = n;
        await sleep(5000);
        const ps = perStream(bareBase, await measureWindow(bare.procs, idleSeconds), perInstance(n));
        result.bareIdle.push(ps);
        log(
          `  bare at ${n} (opened ${r.opened}): ${ps.total.kibPerStream} KiB RSS/stream (${ps.total.heapKibPerStream} heap), ${ps.total.corePctPer50k} % core per 50k`,
        );
      }
    } finally {
      await pool.closeAll();
      await bare.stop();
    }
  }
} finally {
  await pool.stop();
  await dep.stop().catch(() => undefined);
  await hub.close();
}

result.loadAfter = loadavg().map((x) => Math.round(x * 100) / 100);
const dir = join(ROOT, 'bench/results');
mkdirSync(dir, { recursive: true });
const files = writeResults(dir, a.label, result);
log(`results: ${files.json}, ${files.md}`);
process.exit(0);

/** With --heap-snapshot: i1 writes a snapshot to HEAP_DIR (compare the two: what the streams hold). */
async function heapSnapshot(what: string): Promise<void> {
  if (!a['heap-snapshot']) return;
  dep.instances[0]!.proc!.child.kill('SIGUSR2');
  log(`heap snapshot of i1 at ${what} requested (written to ${HEAP_DIR})`);
  await sleep(15_000);
}

/** SIGKILLs the last instance and waits until every stream is open again (through the others). */
async function killOne(p: FollowerPool, n: number) {
  await sleep((turnSeconds * 1000) / 2);
  const victim = dep.instances[dep.instances.length - 1]!;
  const before = await p.report();
  const at = Date.now();
  await victim.kill();
  victim.proc = null;
  bases.splice(bases.indexOf(victim.base), 1);
  log(`  SIGKILLed ${victim.name}; waiting for ${n} streams …`);
  let r = await p.report();
  while (r.open < n && Date.now() - at < 120_000) {
    await sleep(250);
    r = await p.report();
  }
  const recoverMs = r.open >= n ? Math.max(0, r.lastReopenAt - at) : null;
  log(`  ${r.open}/${n} open again, recovered in ${recoverMs} ms`);
  await sleep((turnSeconds * 1000) / 2);
  return { instance: victim.name, streams: n, recoverMs, reopened: r.reconnects - before.reconnects };
}
