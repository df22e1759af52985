import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '../..');

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

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const p of live) p.kill('SIGKILL');
});

/** Spawns `entry` (default src/main.ts) of the checkout at `cwd` (default this one) with tsx and the given environment on top of PATH and HOME. */
export function spawnService(
  env: Record<string, string>,
  t: { after(fn: () => unknown): void },
  entry = 'src/main.ts',
  cwd = ROOT,
): ServiceProcess {
  const proc = spawn(process.execPath, ['--experimental-async-context-frame', '--import', 'tsx', entry], {
    cwd,
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '/tmp', LOG_LEVEL: 'info', ...env },
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
