import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { type NatsCluster, type NatsServer, startNatsCluster } from '../../test/helpers/nats-server.js';
import { SERVICE_ENTRY, SERVICE_NODE_FLAGS, freePort, readMemory, spawnProcess, type Proc } from '../lib/process.js';
import { type PrivatePostgres, startPrivatePostgres } from './postgres.js';
import { type ToolServer, startToolServer } from './tool-server.js';

/**
 * The deployment the chaos suite attacks, all on this machine: a private PostgreSQL, a 3-node
 * NATS JetStream cluster with every stream and bucket at 3 replicas (NATS_REPLICAS=3, as
 * deploy/compose.yaml's `auto` resolves on three nodes), the slow tool server, and N service
 * instances in distributed mode running the compiled service (dist/, as `npm start` does).
 */
export const ADMIN_KEY = 'chaos-admin-key-0123456789abcdef';

export interface Instance {
  name: string;
  base: string;
  alive(): boolean;
  /** Starts the process and resolves with the ms until /health answered 200. */
  start(): Promise<number>;
  /** Sends the signal and resolves once the process has exited. */
  signal(sig: 'SIGKILL' | 'SIGTERM'): Promise<void>;
  /** SIGSTOP for `ms`, then SIGCONT: a stall (GC pause, VM steal), not a crash. */
  freeze(ms: number): Promise<void>;
  /** Peak VmHWM over every process this instance ran, in KiB, and the current RSS. */
  memory(): { peakKiB: number; rssKiB: number | null };
  /** Removes its data directory (after it stopped). */
  destroy(): void;
}

export interface Cluster {
  instances: Instance[];
  nats: NatsCluster;
  pg: PrivatePostgres;
  tools: ToolServer;
  /** Which instance claimed each session's turn last (from the instances' `turn claimed` log lines). */
  claims: Map<string, string>;
  /** SIGKILL of one NATS node's process (the helper's stop() is a graceful SIGTERM). */
  killNatsNode(node: NatsServer): Promise<void>;
  /** SIGSTOP of one NATS node's process for `ms`, then SIGCONT. */
  freezeNatsNode(node: NatsServer, ms: number): Promise<void>;
  stop(): Promise<void>;
}

const ROOT = join(dirname(new URL(import.meta.url).pathname), '../..');
const READY_TIMEOUT_MS = 120_000;

/** Feeds each complete line of a stream to `onLine`. */
function onLines(stream: NodeJS.ReadableStream, onLine: (line: string) => void): void {
  let rest = '';
  stream.on('data', (chunk: Buffer) => {
    const lines = (rest + chunk.toString('utf8')).split('\n');
    rest = lines.pop()!;
    for (const l of lines) onLine(l);
  });
}

async function waitHealthy(base: string, proc: Proc, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  void proc.exited.then(() => (exited = true));
  while (Date.now() < deadline && !exited) {
    const res = await fetch(`${base}/health`, { signal: AbortSignal.timeout(2000) }).catch(() => null);
    await res?.arrayBuffer();
    if (res?.status === 200) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${proc.name} not healthy at ${base} (${exited ? 'exited' : 'timed out'}):\n${proc.output().slice(-3000)}`);
}

function createInstance(name: string, port: number, env: Record<string, string>, claims: Map<string, string>): Instance {
  const base = `http://127.0.0.1:${port}`;
  const dataDir = mkdtempSync(join(tmpdir(), `chaos-${name}-`));
  let proc: Proc | null = null;
  let gone = true;
  let peakKiB = 0;
  const sampler = setInterval(() => {
    const m = proc && !gone ? readMemory(proc.pid) : null;
    if (m) peakKiB = Math.max(peakKiB, m.peakKiB);
  }, 1000);
  sampler.unref();
  return {
    name,
    base,
    alive: () => !gone,
    async start() {
      const t0 = Date.now();
      const p = spawnProcess({
        name,
        args: [...SERVICE_NODE_FLAGS, join(ROOT, SERVICE_ENTRY)],
        env: { ...env, PORT: String(port), INSTANCE_ID: name, DATA_DIR: dataDir },
        cwd: ROOT,
      });
      proc = p;
      gone = false;
      void p.exited.then(() => (gone = true));
      // CHAOS_LOG_DIR: every instance's log kept in a file per process (to explain a finding afterwards).
      const logDir = process.env['CHAOS_LOG_DIR'];
      if (logDir) p.child.stdout!.pipe(createWriteStream(join(logDir, `${name}-${p.pid}.log`), { flags: 'a' }));
      onLines(p.child.stdout!, (line) => {
        if (!line.includes('"turn claimed"')) return;
        try {
          const l = JSON.parse(line) as { sessionId?: string };
          if (l.sessionId) claims.set(l.sessionId, name);
        } catch {
          // not a log line of ours
        }
      });
      await waitHealthy(base, p, READY_TIMEOUT_MS);
      return Date.now() - t0;
    },
    async signal(sig) {
      if (!proc || gone) return;
      const m = readMemory(proc.pid);
      if (m) peakKiB = Math.max(peakKiB, m.peakKiB);
      proc.child.kill(sig);
      await proc.exited;
    },
    async freeze(ms) {
      if (!proc || gone) return;
      proc.child.kill('SIGSTOP');
      await new Promise((r) => setTimeout(r, ms));
      proc.child.kill('SIGCONT');
    },
    memory: () => ({ peakKiB, rssKiB: proc && !gone ? (readMemory(proc.pid)?.rssKiB ?? null) : null }),
    destroy: () => rmSync(dataDir, { recursive: true, force: true }),
  };
}

/** The pid of a test nats-server, found by the config file on its command line. */
function natsPid(node: NatsServer): number | null {
  const conf = join(dirname(node.storeDir), `${node.name}.conf`);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (cmd.includes(conf) && basename(cmd[0]!).startsWith('nats-server')) return Number(entry);
    } catch {
      // exited while we looked
    }
  }
  return null;
}

export async function startCluster(opts: { instances: number; log: (msg: string) => void }): Promise<Cluster> {
  const { log } = opts;
  const pg = startPrivatePostgres(await freePort());
  log(`postgres: private cluster on port ${pg.port}`);
  const tools = await startToolServer();
  // The database outlives this process unless destroyed: a failed start must not leak it.
  const nats = await startNatsCluster(3, { logDir: process.env['CHAOS_LOG_DIR'] || undefined }).catch(async (err: unknown) => {
    await tools.close();
    pg.destroy();
    throw err;
  });
  log(`nats: 3 nodes (${nats.servers.map((s) => s.port).join(', ')})`);
  const env: Record<string, string> = {
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    BOOTSTRAP_ADMIN_API_KEY: ADMIN_KEY,
    DATABASE_URL: pg.url,
    LLMSIM_ENABLED: 'true', // the workload's turns run on the simulator
    NATS_URL: nats.url,
    NATS_REPLICAS: '3',
    EXPECTED_INSTANCES: String(opts.instances),
    SECRETS_ENCRYPTION_KEY: `chaos:${randomBytes(32).toString('base64')}`,
    WEB_FETCH_ALLOWED_PRIVATE_HOSTS: '127.0.0.1',
  };
  const claims = new Map<string, string>();
  const instances: Instance[] = [];
  for (let i = 1; i <= opts.instances; i++) instances.push(createInstance(`i${i}`, await freePort(), env, claims));
  const stop = async () => {
    await Promise.all(instances.map((i) => i.signal('SIGTERM')));
    await nats.stop();
    await tools.close();
    pg.destroy();
    for (const i of instances) i.destroy();
  };
  try {
    // The first one alone: it runs the migrations and creates the streams.
    log(`instance i1 healthy after ${await instances[0]!.start()} ms`);
    for (const inst of instances.slice(1)) log(`instance ${inst.name} healthy after ${await inst.start()} ms`);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    instances,
    nats,
    pg,
    tools,
    claims,
    stop,
    async killNatsNode(node) {
      const pid = natsPid(node);
      if (pid === null) throw new Error(`nats-server ${node.name} is not running`);
      process.kill(pid, 'SIGKILL');
      while (natsPid(node) === pid) await new Promise((r) => setTimeout(r, 20));
    },
    async freezeNatsNode(node, ms) {
      const pid = natsPid(node);
      if (pid === null) throw new Error(`nats-server ${node.name} is not running`);
      process.kill(pid, 'SIGSTOP');
      await new Promise((r) => setTimeout(r, ms));
      process.kill(pid, 'SIGCONT');
    },
  };
}
