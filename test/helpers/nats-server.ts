import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Anything with node:test's `after` (a TestContext or a suite context). */
export interface Cleanup {
  after(fn: () => unknown): void;
}

export interface NatsServerOptions {
  /** Registers stop() + temp dir removal with the test (recommended). */
  t?: Cleanup;
  /** How long to wait for the server to become healthy, in ms (default 15000). */
  readyTimeoutMs?: number;
}

export interface NatsServer {
  url: string;
  port: number;
  storeDir: string;
  /** Stops the process (SIGTERM, SIGKILL after 5 s). Idempotent. */
  stop(): Promise<void>;
  /** Starts it again on the same port with the same store dir. */
  restart(): Promise<void>;
}

export interface NatsCluster {
  servers: NatsServer[];
  /** All client URLs, comma-separated (what NATS_URL would hold). */
  url: string;
  stop(): Promise<void>;
}

const MIN_MINOR = 10;

/** The nats-server binary: $NATS_SERVER_BIN, else `nats-server` on PATH; must be >= 2.10. */
export function natsServerBin(): string {
  const bin = process.env['NATS_SERVER_BIN'] || 'nats-server';
  const out = spawnSync(bin, ['--version'], { encoding: 'utf8' });
  const m = /v(\d+)\.(\d+)\./.exec(out.stdout ?? '');
  if (out.error || !m || Number(m[1]) < 2 || (Number(m[1]) === 2 && Number(m[2]) < MIN_MINOR)) {
    throw new Error(
      `nats-server >= 2.${MIN_MINOR} not found (tried '${bin}': ${out.error?.message ?? out.stdout?.trim() ?? 'no output'}). ` +
        `Run: eval "$(bash scripts/bootstrap.sh)" to put it on PATH and export NATS_SERVER_BIN.`,
    );
  }
  return bin;
}

/** A TCP port that was free a moment ago. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

// Children are killed, and temp store dirs removed, when the test process exits: callers
// that pass no `t` (or die before their hooks run) leak nothing.
const live = new Set<ChildProcess>();
const tempRoots = new Set<string>();
process.once('exit', () => {
  for (const p of live) p.kill('SIGKILL');
  for (const dir of tempRoots) rmSync(dir, { recursive: true, force: true });
});

function tempRoot(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempRoots.add(dir);
  return dir;
}

interface NodeSpec {
  name: string;
  port: number;
  monitorPort: number;
  storeDir: string;
  config: string;
}

function writeConfig(spec: Omit<NodeSpec, 'config'>, cluster?: { port: number; routes: number[] }): string {
  const lines = [
    `server_name: ${spec.name}`,
    `listen: 127.0.0.1:${spec.port}`,
    `http: 127.0.0.1:${spec.monitorPort}`,
    `jetstream { store_dir: "${spec.storeDir}" }`,
  ];
  if (cluster) {
    const routes = cluster.routes.map((p) => `"nats://127.0.0.1:${p}"`).join(', ');
    lines.push(`cluster { name: test, listen: 127.0.0.1:${cluster.port}, routes: [${routes}] }`);
  }
  const file = join(spec.storeDir, '..', `${spec.name}.conf`);
  writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

async function waitHealthy(spec: NodeSpec, proc: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new Error(`nats-server ${spec.name} exited with ${proc.exitCode}`);
    try {
      const res = await fetch(`http://127.0.0.1:${spec.monitorPort}/healthz`);
      if (res.ok) return;
      last = await res.text();
    } catch (err) {
      last = String(err);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`nats-server ${spec.name} not healthy after ${timeoutMs} ms: ${last}`);
}

function launch(bin: string, spec: NodeSpec): ChildProcess {
  const proc = spawn(bin, ['-c', spec.config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let tail = '';
  proc.stderr?.on('data', (d: Buffer) => {
    tail = (tail + d.toString()).slice(-4000);
  });
  proc.once('exit', (code) => {
    live.delete(proc);
    if (code && code !== 0 && process.env['NATS_TEST_DEBUG']) console.error(tail);
  });
  live.add(proc);
  return proc;
}

function stopProcess(proc: ChildProcess | null): Promise<void> {
  if (!proc || proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => proc.kill('SIGKILL'), 5000);
    proc.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    proc.kill('SIGTERM');
  });
}

function managed(bin: string, spec: NodeSpec, readyTimeoutMs: number, waitReady: boolean) {
  let proc: ChildProcess | null = null;
  const start = async (): Promise<void> => {
    proc = launch(bin, spec);
    if (waitReady) await waitHealthy(spec, proc, readyTimeoutMs);
  };
  const server: NatsServer = {
    url: `nats://127.0.0.1:${spec.port}`,
    port: spec.port,
    storeDir: spec.storeDir,
    stop: () => stopProcess(proc),
    async restart() {
      await stopProcess(proc);
      await start();
      if (!waitReady) await waitHealthy(spec, proc!, readyTimeoutMs);
    },
  };
  const jsz = async (): Promise<MetaCluster | undefined> => {
    const res = await fetch(`http://127.0.0.1:${spec.monitorPort}/jsz`).catch(() => null);
    return res?.ok ? ((await res.json()) as { meta_cluster?: MetaCluster }).meta_cluster : undefined;
  };
  return { server, start, healthy: () => waitHealthy(spec, proc!, readyTimeoutMs), jsz };
}

interface MetaCluster {
  leader?: string;
  replicas?: { name: string; current: boolean; offline?: boolean }[];
}

/** Waits until the meta leader sees every other node as a current peer (else placement of R3 streams fails). */
async function waitMetaQuorum(nodes: { jsz(): Promise<MetaCluster | undefined> }[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const metas = await Promise.all(nodes.map((x) => x.jsz()));
    const full = metas.some((m) => m?.leader && m.replicas?.length === nodes.length - 1 && m.replicas.every((r) => r.current && !r.offline));
    if (full) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`JetStream meta group did not reach ${nodes.length} current peers within ${timeoutMs} ms`);
}

async function nodeSpec(root: string, name: string): Promise<Omit<NodeSpec, 'config'>> {
  return { name, port: await freePort(), monitorPort: await freePort(), storeDir: join(root, name) };
}

/** Spawns a single JetStream nats-server on a free port with a temp store dir. */
export async function startNatsServer({ t, readyTimeoutMs = 15_000 }: NatsServerOptions = {}): Promise<NatsServer> {
  const bin = natsServerBin();
  const root = tempRoot('nats-test-');
  const base = await nodeSpec(root, 'n1');
  const spec = { ...base, config: writeConfig(base) };
  const { server, start } = managed(bin, spec, readyTimeoutMs, true);
  t?.after(async () => {
    await server.stop();
    rmSync(root, { recursive: true, force: true });
  });
  await start();
  return server;
}

/** Spawns an n-node JetStream cluster (routes on free ports) and waits until every node is healthy. */
export async function startNatsCluster(n = 3, { t, readyTimeoutMs = 90_000 }: NatsServerOptions = {}): Promise<NatsCluster> {
  const bin = natsServerBin();
  const root = tempRoot('nats-cluster-');
  const bases = await Promise.all(Array.from({ length: n }, (_, i) => nodeSpec(root, `n${i + 1}`)));
  const routePorts = await Promise.all(bases.map(() => freePort()));
  const nodes = bases.map((b, i) =>
    managed(bin, { ...b, config: writeConfig(b, { port: routePorts[i]!, routes: routePorts }) }, readyTimeoutMs, false),
  );
  const stop = async () => {
    await Promise.all(nodes.map((x) => x.server.stop()));
  };
  t?.after(async () => {
    await stop();
    rmSync(root, { recursive: true, force: true });
  });
  // Start all first: a node is only healthy once JetStream has a meta leader, which needs a quorum.
  await Promise.all(nodes.map((x) => x.start()));
  await Promise.all(nodes.map((x) => x.healthy()));
  await waitMetaQuorum(nodes, readyTimeoutMs);
  return { servers: nodes.map((x) => x.server), url: nodes.map((x) => x.server.url).join(','), stop };
}
