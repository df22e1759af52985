import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Spawning the processes a benchmark measures (servers, load generators) and reading their
 * resource use from /proc. Every benchmark under bench/ uses these, so servers and clients
 * always run in separate processes and are cleaned up the same way.
 */

/** A TCP port that was free a moment ago (one helper for tests and benches). */
export { freePort } from '../../test/helpers/nats-server.js';

/** Node flags the service runs with in production (scripts/start.sh, deploy/Dockerfile; docs/decisions/0008-runtime-node-flags.md). */
export const SERVICE_NODE_FLAGS = ['--experimental-async-context-frame', '--max-semi-space-size=32', '--heap-growing-percent=50'];

/** What `npm start` runs, relative to the checkout: the bundle scripts/build.sh makes. */
export const SERVICE_ENTRY = 'dist/server/main.js';

/** What `npm start` does first: compile and bundle the checkout at `root` when its sources are newer than dist/. */
export function buildIfStale(root: string): void {
  const build = spawnSync('bash', [join(root, 'scripts/build.sh'), '--if-stale'], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
  if (build.status !== 0) throw new Error(`scripts/build.sh failed in ${root}`);
}

/** True when `taskset` exists and the machine has at least two CPUs to split. */
export function canPin(): boolean {
  return spawnSync('taskset', ['-V'], { stdio: 'ignore' }).status === 0 && cpuCount() >= 2;
}

export function cpuCount(): number {
  return Number(spawnSync('nproc', [], { encoding: 'utf8' }).stdout.trim()) || 1;
}

/** Prefixes a command with `taskset -c <cpus>` (taskset execs, so the pid stays the command's). */
export function pinned(cpus: string | undefined, command: string, args: string[]): [string, string[]] {
  return cpus ? ['taskset', ['-c', cpus, command, ...args]] : [command, args];
}

export interface SpawnOptions {
  /** Shown in errors and results. */
  name: string;
  /** Default: this Node binary. */
  command?: string;
  args: string[];
  env?: Record<string, string | undefined>;
  cwd?: string;
  /** CPU list for `taskset -c` (e.g. "0"); unset: not pinned. */
  cpus?: string;
}

export interface Proc {
  name: string;
  pid: number;
  child: ChildProcess;
  /** Everything the process wrote so far (stdout + stderr, last 64 KB). */
  output(): string;
  /** Its stdout alone (last 1 MB), for tools that print a JSON report. */
  stdout(): string;
  /** Resolves with the exit code (or signal name) once the process has exited. */
  exited: Promise<number | string>;
  /** SIGTERM, then SIGKILL after `graceMs`. Idempotent. */
  stop(graceMs?: number): Promise<number | string>;
  /** Current and peak resident set size in KiB (VmRSS / VmHWM), null after exit. */
  memory(): { rssKiB: number; peakKiB: number } | null;
  /** User + system CPU seconds consumed so far, null after exit. */
  cpuSeconds(): number | null;
}

const live = new Set<ChildProcess>();
const interruptCleanups: (() => Promise<unknown>)[] = [];
process.once('exit', () => {
  for (const p of live) p.kill('SIGKILL');
});
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    const deadline = new Promise((r) => setTimeout(r, 10_000).unref());
    void Promise.race([Promise.allSettled(interruptCleanups.map((fn) => fn())), deadline]).finally(() => {
      for (const p of live) p.kill('SIGKILL');
      process.exit(130);
    });
  });
}

/** Runs `fn` (e.g. dropping a database) if the benchmark is interrupted by SIGINT/SIGTERM. */
export function onInterrupt(fn: () => Promise<unknown>): void {
  interruptCleanups.push(fn);
}

/**
 * The last `limit` characters of a stream's text. Trimmed once the kept text is twice the limit,
 * not per chunk: slicing a growing string per chunk copied up to the limit every time, which a
 * service logging every request (LOG_LEVEL=info) turned into the harness's own CPU load.
 */
function tailText(limit: number): { add(chunk: Buffer): void; text(): string } {
  let kept = '';
  return {
    add(chunk) {
      kept += chunk.toString('utf8');
      if (kept.length > 2 * limit) kept = kept.slice(-limit);
    },
    text: () => kept.slice(-limit),
  };
}

/** Starts a process; it is SIGKILLed if the benchmark process exits without stopping it. */
export function spawnProcess(opts: SpawnOptions): Proc {
  const [command, args] = pinned(opts.cpus, opts.command ?? process.execPath, opts.args);
  const child = spawn(command, args, {
    cwd: opts.cwd,
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(child);
  const out = tailText(65536);
  const stdout = tailText(1 << 20);
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout.add(chunk);
    out.add(chunk);
  });
  child.stderr!.on('data', out.add);
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => {
      live.delete(child);
      resolve(code ?? signal ?? 'unknown');
    });
  });
  const pid = child.pid!;
  return {
    name: opts.name,
    pid,
    child,
    output: out.text,
    stdout: stdout.text,
    exited,
    async stop(graceMs = 10_000) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        try {
          return await exited;
        } finally {
          clearTimeout(timer);
        }
      }
      return exited;
    },
    memory: () => readMemory(pid),
    cpuSeconds: () => readCpuSeconds(pid),
  };
}

/**
 * Samples a process's CPU time while it runs; `stop()` returns the last reading (the kernel
 * forgets a process's counters once it has been reaped, so they cannot be read after exit).
 */
export function trackCpu(pid: number, intervalMs = 200): { stop(): number | null } {
  let last = readCpuSeconds(pid);
  const timer = setInterval(() => {
    last = readCpuSeconds(pid) ?? last;
  }, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      return last;
    },
  };
}

/** VmRSS and VmHWM of a process, in KiB. */
export function readMemory(pid: number): { rssKiB: number; peakKiB: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { rssKiB: field('VmRSS'), peakKiB: field('VmHWM') };
  } catch {
    return null;
  }
}

/** utime + stime of a process (not its children), in seconds. */
export function readCpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 2 (comm) may contain spaces; everything after its closing parenthesis is fixed.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14, 15)
    return ticks / clockTicks();
  } catch {
    return null;
  }
}

let ticksPerSecond: number | undefined;
function clockTicks(): number {
  ticksPerSecond ??= Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
  return ticksPerSecond;
}

export interface ServerOptions extends SpawnOptions {
  /** Polled until it answers with `readyStatus` (default 200). */
  readyUrl: string;
  readyStatus?: number;
  /** Default 60 s (a first PGlite open or migrations take a few seconds). */
  readyTimeoutMs?: number;
}

/** Spawns a server and waits until `readyUrl` answers; fails with the server's output otherwise. */
export async function startServer(opts: ServerOptions): Promise<Proc> {
  const proc = spawnProcess(opts);
  const deadline = Date.now() + (opts.readyTimeoutMs ?? 60_000);
  let last = '';
  let exitedWith: number | string | undefined;
  void proc.exited.then((c) => (exitedWith = c));
  while (Date.now() < deadline) {
    if (exitedWith !== undefined) break;
    try {
      const res = await fetch(opts.readyUrl, { signal: AbortSignal.timeout(2000) });
      await res.arrayBuffer();
      if (res.status === (opts.readyStatus ?? 200)) return proc;
      last = `HTTP ${res.status}`;
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  await proc.stop(2000);
  throw new Error(
    `${opts.name} did not become ready at ${opts.readyUrl} (${exitedWith !== undefined ? `exited with ${exitedWith}` : `last: ${last}`}).\n` +
      `--- ${opts.name} output ---\n${proc.output().slice(-4000)}`,
  );
}

/**
 * Machine-wide CPU counters from /proc/stat, in jiffies: `busy` is everything but idle and iowait;
 * `processes` is user + nice + system only (interrupt time belongs to no process); `steal` is
 * time the hypervisor gave this VM's CPUs to someone else (a noisy host).
 */
export function readSystemCpu(): { busy: number; total: number; processes: number; steal: number } | null {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
    const v = line.trim().split(/\s+/).slice(1).map(Number);
    const idle = (v[3] ?? 0) + (v[4] ?? 0); // idle + iowait
    const total = v.slice(0, 8).reduce((a, b) => a + b, 0); // without guest columns (already in user)
    return { busy: total - idle, total, processes: (v[0] ?? 0) + (v[1] ?? 0) + (v[2] ?? 0), steal: v[7] ?? 0 };
  } catch {
    return null;
  }
}

/** Share of all CPUs that was busy between two readSystemCpu() readings, 0..1. */
export function busyShare(a: { busy: number; total: number } | null, b: { busy: number; total: number } | null): number | null {
  if (!a || !b || b.total === a.total) return null;
  return (b.busy - a.busy) / (b.total - a.total);
}

/** Share of all CPUs stolen by the hypervisor between two readSystemCpu() readings, 0..1. */
export function stealShare(a: { steal: number; total: number } | null, b: { steal: number; total: number } | null): number | null {
  if (!a || !b || b.total === a.total) return null;
  return (b.steal - a.steal) / (b.total - a.total);
}

/** CPU seconds spent in processes (user + nice + system) between two readSystemCpu() readings. */
export function processCpuSeconds(a: { processes: number } | null, b: { processes: number } | null): number | null {
  return a && b ? (b.processes - a.processes) / clockTicks() : null;
}

/**
 * CPU seconds used so far by every process whose command line contains `needle` (e.g. the
 * PostgreSQL backends of one database: their titles name it). Keyed by pid, so a difference of
 * two readings counts only processes alive at both (or new ones from zero).
 */
export function readCpuByCmdline(needle: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (!cmd.includes(needle)) continue;
      const cpu = readCpuSeconds(Number(entry));
      if (cpu !== null) out.set(Number(entry), cpu);
    } catch {
      // the process exited while we looked
    }
  }
  return out;
}

/** CPU seconds between two readCpuByCmdline() readings. */
export function cpuDelta(before: Map<number, number>, after: Map<number, number>): number {
  let sum = 0;
  for (const [pid, cpu] of after) sum += cpu - (before.get(pid) ?? 0);
  return sum;
}

/**
 * Other work on a shared machine skews every figure. Waits (up to `maxWaitMs`) for a one-second
 * window in which at most `maxBusy` of all CPUs were busy, and returns the last window's share so
 * the result can carry it.
 */
export async function waitForQuiet(maxBusy = 0.1, maxWaitMs = 60_000): Promise<{ busy: number | null; waitedMs: number }> {
  const start = Date.now();
  let busy: number | null = null;
  do {
    const a = readSystemCpu();
    await new Promise((r) => setTimeout(r, 1000));
    busy = busyShare(a, readSystemCpu());
    if (busy === null || busy <= maxBusy) break;
  } while (Date.now() - start < maxWaitMs);
  return { busy, waitedMs: Date.now() - start };
}

/** A process and all its descendants (from the ppid field of /proc/<pid>/stat). */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(entry));
      children.set(ppid, list);
    } catch {
      // exited while we looked
    }
  }
  const out: number[] = [];
  const queue = [root];
  while (queue.length) {
    const pid = queue.shift()!;
    out.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return out;
}

/**
 * CPU seconds per pid of a process tree (e.g. a dev server that runs its work in a child
 * process); the difference of two readings is `cpuDelta(before, after)`.
 */
export function readTreeCpu(root: number): Map<number, number> {
  const out = new Map<number, number>();
  for (const pid of processTree(root)) {
    const cpu = readCpuSeconds(pid);
    if (cpu !== null) out.set(pid, cpu);
  }
  return out;
}

/** Summed VmRSS of a process tree, in KiB (null when the root has exited). */
export function readTreeRssKiB(root: number): number | null {
  if (!readMemory(root)) return null;
  return processTree(root).reduce((sum, pid) => {
    const rss = readMemory(pid)?.rssKiB ?? Number.NaN;
    // A child that has exited but is not yet reaped has no VmRSS: it holds no memory.
    return sum + (Number.isFinite(rss) ? rss : 0);
  }, 0);
}

/** What every benchmark's service starts with: loopback, quiet logs, the bench's admin key and its own data directory. */
export function serviceEnv(port: number, dataDir: string, adminKey: string, extra: Record<string, string> = {}): Record<string, string> {
  return { HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn', BOOTSTRAP_ADMIN_API_KEY: adminKey, DATA_DIR: dataDir, ...extra };
}
