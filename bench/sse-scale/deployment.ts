import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase } from '../../test/helpers/postgres.js';
import { natsServiceEnv, startNatsServer, type NatsServer } from '../../test/helpers/nats-server.js';
import { inspectorUrl } from './inspector.js';
import { SERVICE_ENTRY, SERVICE_NODE_FLAGS, buildIfStale, freePort, serviceEnv, startServer, type Proc } from '../lib/process.js';

/**
 * The deployment bench/sse-scale measures: one nats-server, a fresh database on the shared
 * PostgreSQL (127.0.0.1:5432), and N service instances in distributed mode running the compiled
 * service (dist/, as `npm start` does), each a child process on its own port.
 */
export const ADMIN_KEY = 'sse-scale-admin-key-0123456789abcdef';

export interface Instance {
  name: string;
  port: number;
  base: string;
  proc: Proc | null;
  /** The inspector's WebSocket URL (for forced GCs), once started. */
  inspector: string | null;
  start(): Promise<void>;
  /** SIGKILL: no `disconnecting`, no drain, as in a crash. */
  kill(): Promise<void>;
}

export interface Deployment {
  instances: Instance[];
  nats: NatsServer;
  dbUrl: string;
  stop(): Promise<void>;
}

export interface DeploymentOptions {
  root: string;
  instances: number;
  /** SSE_CYCLE_MS; Infinity-like (1 h) when cycling is off. */
  cycleMs: number;
  /** Extra Node flags for the instances (e.g. --heapsnapshot-signal=SIGUSR2). */
  nodeFlags?: string[];
  log: (msg: string) => void;
}

export async function startDeployment(o: DeploymentOptions): Promise<Deployment> {
  buildIfStale(o.root);
  const db = await createTestDatabase('sse_scale');
  o.log(`postgres: fresh database ${new URL(db.url).pathname.slice(1)}`);
  const nats = await startNatsServer().catch(async (err: unknown) => {
    await db.drop();
    throw err;
  });
  o.log(`nats: ${nats.url}`);
  const shared: Record<string, string> = {
    DATABASE_URL: db.url,
    ...natsServiceEnv(nats),
    LLMSIM_ENABLED: 'true',
    EXPECTED_INSTANCES: String(o.instances),
    SECRETS_ENCRYPTION_KEY: `sse-scale:${randomBytes(32).toString('base64')}`,
    // Room for the benchmark's streams: the limits themselves are not under test.
    SSE_MAX_PER_SESSION: '1000',
    SSE_MAX_PER_ORG: '1000000',
    SSE_MAX_GLOBAL: '1000000',
    ORG_MAX_SESSIONS: '1000000',
    SSE_CYCLE_MS: String(o.cycleMs),
    // Three pools on the shared server's 100 connections.
    DATABASE_POOL_MAX: '20',
  };
  const instances: Instance[] = [];
  const dataDirs: string[] = [];
  for (let i = 1; i <= o.instances; i++) {
    const port = await freePort();
    const name = `i${i}`;
    const dataDir = mkdtempSync(join(tmpdir(), `sse-scale-${name}-`));
    dataDirs.push(dataDir);
    const inst: Instance = {
      name,
      port,
      base: `http://127.0.0.1:${port}`,
      proc: null,
      inspector: null,
      async start() {
        inst.proc = await startServer({
          name,
          args: [...SERVICE_NODE_FLAGS, '--inspect=127.0.0.1:0', ...(o.nodeFlags ?? []), join(o.root, SERVICE_ENTRY)],
          env: serviceEnv(port, dataDir, ADMIN_KEY, { ...shared, INSTANCE_ID: name }),
          cwd: dataDir,
          readyUrl: `${inst.base}/health`,
          readyTimeoutMs: 120_000,
        });
        inst.inspector = inspectorUrl(inst.proc.output());
      },
      async kill() {
        inst.proc?.child.kill('SIGKILL');
        await inst.proc?.exited;
      },
    };
    instances.push(inst);
  }
  const stop = async () => {
    await Promise.all(instances.map((i) => i.proc?.stop(5000)));
    await nats.stop();
    await db.drop().catch(() => undefined);
    for (const d of dataDirs) rmSync(d, { recursive: true, force: true });
  };
  try {
    // The first alone: it runs the migrations and creates the streams.
    await instances[0]!.start();
    await Promise.all(instances.slice(1).map((i) => i.start()));
  } catch (err) {
    await stop();
    throw err;
  }
  o.log(`instances: ${instances.map((i) => `${i.name}:${i.port} pid ${i.proc!.pid}`).join(', ')}`);
  return { instances, nats, dbUrl: db.url, stop };
}
