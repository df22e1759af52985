import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { TEST_ADMIN_KEY, TEST_SECRETS_KEY } from '../helpers/app.js';

const ROOT = resolve(import.meta.dirname, '../..');

export interface LogLine {
  msg: string;
  [key: string]: unknown;
}

/** A `node --import tsx src/main.ts` child (ROLE=worker by default) with its parsed JSON log. */
export interface WorkerProcess {
  name: string;
  proc: ChildProcess;
  lines: LogLine[];
  waitForLog(pred: (l: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
  kill(signal: NodeJS.Signals): void;
  /** SIGTERM and wait (SIGKILL after 5 s); no-op when it is gone. */
  stop(): Promise<void>;
}

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const p of live) p.kill('SIGKILL');
});

export function spawnWorker(name: string, env: Record<string, string>, t: { after(fn: () => unknown): void }): WorkerProcess {
  const dataDir = mkdtempSync(join(tmpdir(), `worker-${name}-`));
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: {
      PATH: process.env['PATH'] ?? '',
      HOME: process.env['HOME'] ?? '/tmp',
      PORT: '0',
      DATA_DIR: dataDir,
      ROLE: 'worker',
      INSTANCE_ID: name,
      LOG_LEVEL: 'info',
      BOOTSTRAP_ADMIN_API_KEY: TEST_ADMIN_KEY,
      SECRETS_ENCRYPTION_KEY: TEST_SECRETS_KEY,
      LLMSIM_ENABLED: 'true',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(proc);
  const lines: LogLine[] = [];
  const waiters = new Set<() => void>();
  let buf = '';
  proc.stdout!.on('data', (d: Buffer) => {
    buf += d.toString();
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      const raw = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      try {
        lines.push(JSON.parse(raw) as LogLine);
      } catch {
        lines.push({ msg: raw });
      }
      for (const w of [...waiters]) w();
    }
  });
  let stderr = '';
  proc.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const exited = new Promise<void>((r) => proc.once('exit', () => (live.delete(proc), r())));
  const worker: WorkerProcess = {
    name,
    proc,
    lines,
    waitForLog(pred, timeoutMs = 30_000) {
      return new Promise((resolvePromise, reject) => {
        const check = () => {
          const hit = lines.find(pred);
          if (hit) {
            waiters.delete(check);
            clearTimeout(timer);
            resolvePromise(hit);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(
              `${name}: log line not seen in ${timeoutMs} ms; stderr: ${stderr}; last lines: ${lines
                .slice(-5)
                .map((l) => l.msg)
                .join(' | ')}`,
            ),
          );
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    kill(signal) {
      proc.kill(signal);
    },
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      const hard = setTimeout(() => proc.kill('SIGKILL'), 5000);
      proc.kill('SIGCONT');
      proc.kill('SIGTERM');
      await exited;
      clearTimeout(hard);
    },
  };
  t.after(async () => {
    await worker.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return worker;
}
