import { mkdtempSync, rmSync } from 'node:fs';
import { after, before } from 'node:test';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createApp, type App } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createTestDatabase } from './postgres.js';
import { seedEmbeddedDataDir } from './pglite-template.js';
import { natsServiceEnv, startNatsServer } from './nats-server.js';
import { request, type RequestOptions, type TestResponse } from './http.js';
import type { AppOptions } from '../../src/app.js';

export { request };

export const TEST_ADMIN_KEY = 'test-admin-key-0123456789abcdef';
/** Distributed mode refuses to start without a shared key-encryption key. */
export const TEST_SECRETS_KEY = 'test-kek:' + Buffer.alloc(32, 7).toString('base64');

export type TestMode = 'pglite' | 'postgres' | 'nats';

export interface TestAppOptions {
  mode?: TestMode;
  env?: Record<string, unknown>;
  /** Reuse a database / NATS server (several instances in one test). */
  databaseUrl?: string;
  natsUrl?: string;
  /** Extra `createApp` options (test-only hooks). */
  appOptions?: Omit<AppOptions, 'logDestination'>;
}

export interface TestApp {
  app: App;
  url: string;
  adminKey: string;
  /** Every log line the app wrote, for redaction checks. */
  logs: string[];
  databaseUrl?: string;
  natsUrl?: string;
  request(method: string, path: string, opts?: RequestOptions): Promise<TestResponse>;
}

/** What the request helpers of the tests need from a running service, in-process or its own process. */
export type ServiceEndpoint = Pick<TestApp, 'url' | 'adminKey' | 'request'>;

/** Boots the service in-process on a free port; everything it started is torn down after the test. */
export async function startTestApp(t: { after(fn: () => unknown): void }, opts: TestAppOptions = {}): Promise<TestApp> {
  const mode = opts.mode ?? 'postgres';
  const dataDir = mkdtempSync(join(tmpdir(), 'ass-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  let databaseUrl = opts.databaseUrl;
  if (!databaseUrl && mode !== 'pglite') {
    const db = await createTestDatabase(mode);
    databaseUrl = db.url;
    t.after(() => db.drop());
  }
  if (mode === 'pglite' && !databaseUrl && opts.env?.['DATA_DIR'] === undefined) await seedEmbeddedDataDir(dataDir);
  let natsUrl = opts.natsUrl;
  if (!natsUrl && mode === 'nats') {
    const nats = await startNatsServer();
    natsUrl = nats.url;
    t.after(() => nats.stop());
  }
  // A server of this process may require TLS (NATS_TEST_SECURE=1): its files go with its URL.
  const envNatsUrl = typeof opts.env?.['NATS_URL'] === 'string' ? opts.env['NATS_URL'] : undefined;
  const nats = envNatsUrl ?? natsUrl;
  const config = loadConfig(
    {},
    {
      PORT: 0,
      DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
      BOOTSTRAP_ADMIN_API_KEY: TEST_ADMIN_KEY,
      // Instances sharing a database share the secrets key (the stored JWT signing key is sealed with it).
      ...(databaseUrl ? { DATABASE_URL: databaseUrl, SECRETS_ENCRYPTION_KEY: TEST_SECRETS_KEY } : {}),
      ...(nats ? natsServiceEnv(nats) : {}),
      // The fake LLM vendors of the tests listen on loopback; a test overrides this to check the refusal.
      LLM_PROVIDER_ALLOWED_PRIVATE_HOSTS: '127.0.0.1,localhost,::1',
      // Every reply of every test is checked against the API document's schema for its status.
      RESPONSE_VALIDATION: true,
      // Most tests drive turns with the built-in simulator, which is off by default outside the embedded quick start.
      LLMSIM_ENABLED: true,
      ...opts.env,
    },
  );
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      logs.push(String(chunk));
      cb();
    },
  });
  const app = await createApp(config, { ...opts.appOptions, logDestination: sink });
  t.after(() => app.close());
  const url = app.url;
  return {
    app,
    url,
    adminKey: TEST_ADMIN_KEY,
    logs,
    databaseUrl,
    natsUrl,
    request: (method, path, ro = {}) => request(url, method, path, { key: TEST_ADMIN_KEY, ...ro }),
  };
}

/**
 * One app for the tests of the enclosing describe, started before the first and closed after the
 * last, where start-up dominates and the tests share no data (each makes its own sessions, keys
 * and names). Returns a getter: the app exists only once the suite runs.
 */
export function sharedTestApp(opts: TestAppOptions | (() => TestAppOptions) = {}): () => TestApp {
  const cleanups: (() => unknown)[] = [];
  let app: TestApp | undefined;
  before(async () => {
    app = await startTestApp({ after: (fn) => cleanups.push(fn) }, typeof opts === 'function' ? opts() : opts);
  });
  after(async () => {
    for (const fn of cleanups.reverse()) await fn();
  });
  return () => {
    if (!app) throw new Error('sharedTestApp: the app is used outside the tests of its describe');
    return app;
  };
}
