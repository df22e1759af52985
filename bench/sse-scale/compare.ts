/**
 * Memory and CPU per idle stream of two versions of the service in one run (issue 28: what a
 * change to src/ cut, before/after under the same client load on the same machine minutes apart).
 *
 *   node --import tsx bench/sse-scale/compare.ts [--ref main] [--streams 5000] [--followers-per-session 1]
 *        [--instances 3] [--idle-seconds 15] [--per-process 8000]
 *
 * `--ref` is checked out into a temporary git worktree (this checkout's node_modules linked in)
 * and built; then each version in turn (the ref first) gets the deployment of run.ts, the same
 * sessions count and streams, a 0-stream and an N-stream idle window (forced GCs through the
 * inspector). Results: bench/results/sse-scale-compare-<stamp>.json and .md.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { positiveInt } from '../lib/args.js';
import { machineInfo } from '../lib/machine.js';
import { createControlHub } from '../sse-fanout/control.js';
import { ADMIN_KEY, startDeployment } from './deployment.js';
import { startFollowers } from './followers.js';
import { createSessions } from './turns.js';
import { measureWindow, perStream } from './window.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const { values: a } = parseArgs({
  options: {
    ref: { type: 'string', default: 'main' },
    streams: { type: 'string', default: '5000' },
    'followers-per-session': { type: 'string', default: '1' },
    instances: { type: 'string', default: '3' },
    'idle-seconds': { type: 'string', default: '15' },
    'per-process': { type: 'string', default: '8000' },
  },
});
const N = positiveInt('streams', a.streams);
const F = positiveInt('followers-per-session', a['followers-per-session']);
const I = positiveInt('instances', a.instances);
const idleSeconds = positiveInt('idle-seconds', a['idle-seconds']);
const perProcess = positiveInt('per-process', a['per-process']);
const S = Math.ceil(N / F);
const t0 = Date.now();
const log = (m: string) => console.log(`[${((Date.now() - t0) / 1000).toFixed(0).padStart(4)} s] ${m}`);
const git = (...args: string[]) => spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' });
const command = `node --import tsx bench/sse-scale/compare.ts ${process.argv.slice(2).join(' ')}`.trim();
const machine = machineInfo();
const loadBefore = loadavg().map((x) => Math.round(x * 100) / 100);

const baseRoot = join(mkdtempSync(join(tmpdir(), 'sse-scale-ref-')), 'tree');
const added = git('worktree', 'add', '--detach', baseRoot, a.ref);
if (added.status !== 0) throw new Error(`git worktree add ${a.ref}: ${added.stderr}`);
if (!existsSync(join(baseRoot, 'node_modules'))) symlinkSync(join(ROOT, 'node_modules'), join(baseRoot, 'node_modules'));
const refCommit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: baseRoot, encoding: 'utf8' }).stdout.trim();

const controlPath = join(mkdtempSync(join(tmpdir(), 'sse-scale-')), 'control.sock');
const hub = createControlHub(controlPath);
await hub.listen();
const pool = await startFollowers({
  here: join(ROOT, 'bench/sse-scale'),
  hub,
  controlPath,
  processes: Math.ceil(N / perProcess),
  perProcess,
});
const versions: { version: string; commit: string | null; idle: ReturnType<typeof perStream> }[] = [];
try {
  for (const [version, root, commit] of [
    [a.ref, baseRoot, refCommit],
    ['this checkout', ROOT, machine.gitCommit],
  ] as const) {
    log(`${version} (${commit}): deployment, ${S} sessions, ${N} streams …`);
    const dep = await startDeployment({ root, instances: I, cycleMs: 3_600_000, log });
    try {
      const sessions = await createSessions(
        dep.instances.map((i) => i.base),
        ADMIN_KEY,
        S,
        log,
      );
      const plan = Array.from({ length: N }, (_, k): [string, string, number] => {
        const s = sessions[k % S]!;
        return [s, `/v1/sessions/${s}/sse`, (k + Math.floor(k / S)) % I];
      });
      const servers = dep.instances.map((i) => ({ name: i.name, pid: i.proc!.pid, inspector: i.inspector }));
      await new Promise((r) => setTimeout(r, 5000));
      const base = await measureWindow(servers, idleSeconds);
      const opened = await pool.open(plan, {
        ports: dep.instances.map((i) => i.port),
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
        reconnect: false,
      });
      await new Promise((r) => setTimeout(r, 5000));
      const idle = perStream(
        base,
        await measureWindow(servers, idleSeconds),
        Array.from({ length: I }, (_, i) => plan.filter((p) => p[2] === i).length),
      );
      versions.push({ version, commit, idle });
      log(
        `  opened ${opened.opened}: ${idle.total.kibPerStream} KiB RSS (${idle.total.heapKibPerStream} heap) per stream, ${idle.total.corePctPer50k} % core per 50k`,
      );
      await pool.closeAll();
    } finally {
      await dep.stop();
    }
  }
} finally {
  await pool.stop();
  await hub.close();
  git('worktree', 'remove', '--force', baseRoot);
}

const result = {
  command,
  machine,
  loadBefore,
  loadAfter: loadavg().map((x) => Math.round(x * 100) / 100),
  streams: N,
  followersPerSession: F,
  instances: I,
  versions,
};
const stamp = new Date().toISOString().slice(0, 16).replace(':', '');
const file = join(ROOT, `bench/results/sse-scale-compare-${stamp}`);
writeFileSync(`${file}.json`, JSON.stringify(result, null, 2) + '\n');
const md = [
  `# bench/sse-scale/compare — ${machine.date}`,
  '',
  `Command: \`${command}\`; ${machine.cpuModel}, ${machine.cpus} cores, load ${loadBefore.join(' ')}.`,
  `${N} idle streams, ${S} sessions × ${F} followers, ${I} instances.`,
  '',
  '| version | commit | RSS KiB/stream | heap KiB/stream | % core per 50k |',
  '|---|---|---:|---:|---:|',
  ...versions.map(
    (v) =>
      `| ${v.version} | ${v.commit} | ${v.idle.total.kibPerStream} | ${v.idle.total.heapKibPerStream} | ${v.idle.total.corePctPer50k} |`,
  ),
  '',
].join('\n');
writeFileSync(`${file}.md`, md);
log(`results: ${file}.json, .md`);
process.exit(0);
