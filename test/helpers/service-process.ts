import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { TEST_ADMIN_KEY, TEST_SECRETS_KEY, type ServiceEndpoint } from './app.js';
import { request } from './http.js';
import { freePort } from './nats-server.js';
import { createTestDatabase } from './postgres.js';

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

/**
 * The service as its own process on a fresh PostgreSQL database, with the admin key of the
 * in-process test app. For latency bounds: inside the test process the service would share its
 * event loop with the test's client, and node:test registers an async hook that tracks every
 * promise's destruction, which a deployed instance never pays.
 */
export async function startServiceProcess(
  t: { after(fn: () => unknown): void },
  env: Record<string, string> = {},
): Promise<ServiceEndpoint & { service: ServiceProcess }> {
  const db = await createTestDatabase('proc');
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const service = spawnService(
    {
      PORT: String(port),
      DATABASE_URL: db.url,
      SECRETS_ENCRYPTION_KEY: TEST_SECRETS_KEY,
      BOOTSTRAP_ADMIN_API_KEY: TEST_ADMIN_KEY,
      LOG_LEVEL: 'warn',
      ...env,
    },
    t,
  );
  // After hooks run in the order they were added: the process stops before its database is dropped.
  t.after(() => db.drop());
  await service.waitHealthy(url);
  return {
    service,
    url,
    adminKey: TEST_ADMIN_KEY,
    request: (method, path, ro = {}) => request(url, method, path, { key: TEST_ADMIN_KEY, ...ro }),
  };
}
