import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startNatsServer } from '../../test/helpers/nats-server.js';
import { startPrivatePostgres } from '../chaos/postgres.js';
import { SERVICE_ENTRY, SERVICE_NODE_FLAGS, freePort, spawnProcess, type Proc } from '../lib/process.js';

/**
 * Restart → healthy (issue 13 item 7): spawns the built service (dist/server/main.js, the Node
 * flags of `npm start`) and measures from the spawn to the first 200 of GET /health, polled
 * every 20 ms. Per mode (embedded: PGlite under a data directory; distributed: a private
 * PostgreSQL and a nats-server) and per load (idle; busy: two `for(;;){}` processes on the 2
 * cores), each tree is started `--runs` times after one unmeasured start (migrations, initdb,
 * the compile cache), the trees alternating so they share the machine's conditions. Trees:
 * `--tree name=dir[@entry][:VAR=value…]` (repeatable; default this checkout), each with dist/ built,
 * started from `entry` (default dist/server/main.js; `@dist/src/main.js` is tsc's output without
 * the bundle) with the variables given (e.g. `nocache=.:NODE_DISABLE_COMPILE_CACHE=1`). With phases:
 * the medians of the `start-up complete` line's phase durations (trees that log it).
 *
 *   node --import tsx bench/startup/run.ts [--runs 5] [--modes embedded,distributed] [--loads idle,busy]
 *        [--tree before=/tmp/main-tree --tree after=.] [--no-write]
 */
const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '5' },
    modes: { type: 'string', default: 'embedded,distributed' },
    loads: { type: 'string', default: 'idle,busy' },
    tree: { type: 'string', multiple: true },
    'no-write': { type: 'boolean', default: false },
  },
});
const ROOT = resolve(import.meta.dirname, '../..');
const runs = Number(values.runs);
const modes = values.modes!.split(',') as ('embedded' | 'distributed')[];
const loads = values.loads!.split(',') as ('idle' | 'busy')[];
const trees = (values.tree ?? [`this=${ROOT}`]).map((t) => {
  const eq = t.indexOf('=');
  const [place, ...vars] = t.slice(eq + 1).split(':') as [string, ...string[]];
  const [dir, entry = SERVICE_ENTRY] = place.split('@') as [string, string?];
  return { name: t.slice(0, eq), dir: resolve(dir), entry, env: Object.fromEntries(vars.map((v) => v.split('=') as [string, string])) };
});

interface Start {
  ms: number;
  phases?: Record<string, number>;
}

async function startOnce({ dir, entry, env: treeEnv }: (typeof trees)[number], env: Record<string, string>): Promise<Start> {
  const port = await freePort();
  const t0 = performance.now();
  const proc = spawnProcess({
    name: 'service',
    args: [...SERVICE_NODE_FLAGS, join(dir, entry)],
    env: { ...env, ...treeEnv, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'info' },
    cwd: dir,
  });
  try {
    await untilHealthy(`http://127.0.0.1:${port}/health`, proc);
    const ms = performance.now() - t0;
    // The summary line follows `listening` within milliseconds (worker and NATS micro service).
    const phases = await summaryLine(proc, 2000);
    return { ms, ...(phases ? { phases } : {}) };
  } finally {
    await proc.stop(15_000);
  }
}

async function untilHealthy(url: string, proc: Proc): Promise<void> {
  let exited = false;
  void proc.exited.then(() => (exited = true));
  const deadline = Date.now() + 180_000;
  while (!exited && Date.now() < deadline) {
    const res = await fetch(url, { signal: AbortSignal.timeout(2000) }).catch(() => null);
    await res?.arrayBuffer();
    if (res?.status === 200) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`service not healthy (${exited ? 'exited' : 'timed out'}):\n${proc.output().slice(-3000)}`);
}

async function summaryLine(proc: Proc, waitMs: number): Promise<Record<string, number> | undefined> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    for (const line of proc.stdout().split('\n')) {
      if (!line.includes('"start-up complete"')) continue;
      return (JSON.parse(line) as { phases: Record<string, number> }).phases;
    }
    if (Date.now() > deadline) return undefined;
    await new Promise((r) => setTimeout(r, 20));
  }
}

function busyLoad(): Proc[] {
  return [1, 2].map((i) => spawnProcess({ name: `busy-${i}`, args: ['-e', 'for(;;){}'] }));
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

async function main() {
  const secretsKey = `bench:${randomBytes(32).toString('base64')}`;
  const pg = modes.includes('distributed') ? startPrivatePostgres(await freePort()) : undefined;
  const nats = modes.includes('distributed') ? await startNatsServer() : undefined;
  const dataDirs: string[] = [];
  const results: { mode: string; load: string; tree: string; starts: Start[] }[] = [];
  try {
    for (const mode of modes) {
      // One database or data directory per tree: each runs its own migrations.
      const envs = trees.map((tree, i): Record<string, string> => {
        if (mode === 'embedded') {
          const dataDir = mkdtempSync(join(tmpdir(), `startup-${tree.name}-`));
          dataDirs.push(dataDir);
          return { DATA_DIR: dataDir };
        }
        return {
          DATABASE_URL: pg!.url.replace(/\/[^/]*$/, `/startup_${i}`),
          NATS_URL: nats!.url,
          SECRETS_ENCRYPTION_KEY: secretsKey,
        };
      });
      for (const [i, tree] of trees.entries()) {
        const first = await startOnce(tree, envs[i]!);
        console.log(`${mode} ${tree.name}: first start (not counted) ${Math.round(first.ms)} ms`);
      }
      for (const load of loads) {
        const hogs = load === 'busy' ? busyLoad() : [];
        const cells = trees.map((tree) => ({ mode, load, tree: tree.name, starts: [] as Start[] }));
        results.push(...cells);
        try {
          for (let r = 0; r < runs; r++) {
            for (const [i, tree] of trees.entries()) {
              const s = await startOnce(tree, envs[i]!);
              cells[i]!.starts.push(s);
              console.log(`${mode} ${load} ${tree.name} #${r + 1}: ${Math.round(s.ms)} ms (load ${loadavg()[0]!.toFixed(1)})`);
            }
          }
        } finally {
          await Promise.all(hogs.map((h) => h.stop(1000)));
        }
      }
    }
  } finally {
    await nats?.stop();
    pg?.destroy();
    for (const d of dataDirs) rmSync(d, { recursive: true, force: true });
  }

  const lines = ['| mode | load | tree | median | min | max |', '|---|---|---|---|---|---|'];
  for (const c of results) {
    const ms = c.starts.map((s) => s.ms);
    lines.push(
      `| ${c.mode} | ${c.load} | ${c.tree} | ${(median(ms) / 1000).toFixed(2)} s | ${(Math.min(...ms) / 1000).toFixed(2)} s | ${(Math.max(...ms) / 1000).toFixed(2)} s |`,
    );
  }
  for (const c of results) {
    const logged = c.starts.filter((s) => s.phases);
    if (!logged.length) continue;
    const names = Object.keys(logged[0]!.phases!);
    const med = names.map((n) => `${n} ${Math.round(median(logged.map((s) => s.phases![n] ?? 0)))}`);
    lines.push('', `phases (median ms), ${c.mode} ${c.load} ${c.tree}: ${med.join(', ')}`);
  }
  const table = lines.join('\n');
  console.log(`\n${table}`);
  if (!values['no-write']) {
    const dir = join(ROOT, 'bench/results');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `startup-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
    writeFileSync(file, `${JSON.stringify({ cpus: cpus().length, node: process.version, runs, trees, results }, null, 2)}\n`);
    console.log(`\nwritten: ${file}`);
  }
}

await main();
