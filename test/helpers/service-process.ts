import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';

export const ROOT = resolve(import.meta.dirname, '../..');

/** What `npm start`, scripts/start.sh and the image run: the bundle scripts/build.sh makes. */
export const BUILT_ENTRY = 'dist/server/main.js';

/** The Node flags of `npm start` (docs/decisions/0008-runtime-node-flags.md). */
export const START_NODE_FLAGS = ['--experimental-async-context-frame', '--max-semi-space-size=32', '--heap-growing-percent=50'];

/** Builds dist/ unless it is newer than every source (scripts/build.sh --if-stale; it serialises concurrent builds). */
export async function ensureBuilt(): Promise<void> {
  await promisify(execFile)('bash', ['scripts/build.sh', '--if-stale'], { cwd: ROOT, timeout: 600_000 });
}

/** A real `node src/main.ts` (or any other entry, e.g. rotate-command.ts) child process. */
export interface ServiceProcess {
  proc: ChildProcess;
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>;
  /** stdout + stderr so far. */
  output(): string;
  /** Polls GET /health until 200. */
  waitHealthy(url: string, ms?: number): Promise<void>;
  /** Waits until the output matches. */
  waitForOutput(re: RegExp, ms?: number): Promise<void>;
  /** SIGTERM and wait (SIGKILL after 15 s); no-op when it is gone. */
  stop(): Promise<void>;
}

/** The exit code; fails if the process is still running after `ms` (a start that did not notice what it should stop for). */
export async function exitCodeWithin(service: Pick<ServiceProcess, 'exited' | 'output'>, ms = 90_000): Promise<number | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still running after ${ms} ms:\n${service.output().slice(-2000)}`)), ms);
  });
  try {
    return await Promise.race([service.exited, late]);
  } finally {
    clearTimeout(timer);
  }
}

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const p of live) p.kill('SIGKILL');
});

/**
 * Spawns `entry` (default src/main.ts) of the checkout at `cwd` (default this one) with the given
 * environment on top of PATH and HOME: a `.ts` entry through tsx, a built `.js` one (BUILT_ENTRY)
 * as `npm start` runs it.
 */
export function spawnService(
  env: Record<string, string>,
  t: { after(fn: () => unknown): void },
  entry = 'src/main.ts',
  cwd = ROOT,
): ServiceProcess {
  const args = entry.endsWith('.ts') ? ['--experimental-async-context-frame', '--import', 'tsx', entry] : [...START_NODE_FLAGS, entry];
  const proc = spawn(process.execPath, args, {
    cwd,
    // The tests' turns run on the built-in simulator, off by default outside the embedded quick start.
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '/tmp', LOG_LEVEL: 'info', LLMSIM_ENABLED: 'true', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(proc);
  let out = '';
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((r) =>
    proc.once('exit', (code) => {
      live.delete(proc);
      r(code);
    }),
  );
  const gone = () => proc.exitCode !== null || proc.signalCode !== null;
  const stop = async () => {
    if (gone()) return;
    const timer = setTimeout(() => proc.kill('SIGKILL'), 15_000);
    proc.kill('SIGTERM');
    await exited;
    clearTimeout(timer);
  };
  t.after(() => stop());
  return {
    proc,
    exited,
    output: () => out,
    async waitHealthy(url, ms = 60_000) {
      const deadline = Date.now() + ms;
      while (Date.now() < deadline) {
        if (gone()) throw new Error(`service exited (${proc.exitCode}) before it was healthy:\n${out.slice(-3000)}`);
        try {
          if ((await fetch(url + '/health')).status === 200) return;
        } catch {
          // not listening yet
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`service not healthy within ${ms} ms:\n${out.slice(-3000)}`);
    },
    async waitForOutput(re, ms = 60_000) {
      const deadline = Date.now() + ms;
      while (!re.test(out)) {
        if (Date.now() > deadline) throw new Error(`no ${re} in the output within ${ms} ms:\n${out.slice(-3000)}`);
        if (gone()) throw new Error(`process exited (${proc.exitCode}) without ${re}:\n${out.slice(-3000)}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    stop,
  };
}
