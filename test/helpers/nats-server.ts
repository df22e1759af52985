import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { JetStreamClient, JetStreamManager, StreamConfig } from '@nats-io/jetstream';
import type { NodeConnectionOptions } from '@nats-io/transport-node';
import { natsConnectOptions, type NatsAuthOptions } from '../../src/bus/nats/connect-options.js';
import { retry } from '../../src/retry/index.js';
import { createTestPki, type TestPki } from './test-pki.js';

/** Anything with node:test's `after` (a TestContext or a suite context). */
export interface Cleanup {
  after(fn: () => unknown): void;
}

export interface NatsServerOptions {
  /** Registers stop() + temp dir removal with the test (recommended). */
  t?: Cleanup;
  /** How long to wait for the server to become healthy, in ms (default 15000). */
  readyTimeoutMs?: number;
  /**
   * Require TLS with client certificates (a throwaway CA made with openssl) and a user with a
   * password (in `url`), with every permission. Default: NATS_TEST_SECURE=1 in the environment,
   * which runs the distributed tests against an authenticated TLS bus.
   */
  secure?: boolean;
  /** Require TLS with client certificates, without adding a user (bring your own `config`). */
  tls?: boolean;
  /** Extra config lines after the generated ones (e.g. an `include` of a file from `files`). */
  config?: string;
  /** Files written next to the config file, by name, before the server starts. */
  files?: Record<string, string>;
  /** Environment of nats-server (the `$VARIABLES` a config references). */
  env?: Record<string, string>;
  /** Client port (single server only; default: a free one), e.g. one a service already waits on. */
  port?: number;
  /** Appends each node's whole log to `<logDir>/<node name>.log` (besides the in-memory tail), e.g. to read after a chaos run. */
  logDir?: string;
}

export interface NatsServer {
  /** Client URL(s); with `secure`, they carry the test user's credentials. */
  url: string;
  /** Client URL(s) without credentials. */
  address: string;
  /** TLS files for clients (the CA, a client certificate and key); {} without TLS. */
  auth: NatsAuthOptions;
  /** The certificates, when TLS is on. */
  pki?: TestPki;
  /** What the server logged lately (stderr; e.g. permission violations). */
  log(): string;
  port: number;
  /** The node's server name (`n1`, `n2`, … in a cluster). */
  name: string;
  /** The monitoring endpoint (`/jsz`, `/healthz`). */
  monitorUrl: string;
  storeDir: string;
  /** Stops the process (SIGTERM, SIGKILL after 5 s). Idempotent. */
  stop(): Promise<void>;
  /** Kills the process at once (SIGKILL): no leadership hand-over, as in a crash. Idempotent. */
  kill(): Promise<void>;
  /** Starts it again on the same port with the same store dir (a cluster node: again, if it does not rejoin). */
  restart(): Promise<void>;
  /** Freezes the process (SIGSTOP): its sockets stay open and nothing answers, as in a long GC pause or VM steal. */
  freeze(): void;
  /** Wakes a frozen process (SIGCONT). */
  thaw(): void;
}

export interface NatsCluster {
  servers: NatsServer[];
  /** All client URLs, comma-separated (what NATS_URL would hold); with credentials when secure. */
  url: string;
  /** TLS files for clients; {} without TLS. */
  auth: NatsAuthOptions;
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

/** Client TLS files of the servers this process started, by client URL (see natsServiceEnv). */
const authByUrl = new Map<string, NatsAuthOptions>();

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

/** What secures the client port, shared by every node of a cluster. */
interface Security {
  pki?: TestPki;
  /** The test user (secure mode): all permissions. */
  user?: { user: string; pass: string };
  config?: string;
  env?: Record<string, string>;
  logDir?: string;
}

function securityOf(root: string, o: NatsServerOptions): Security {
  const secure = o.secure ?? process.env['NATS_TEST_SECURE'] === '1';
  const pkiDir = join(root, 'pki');
  let pki: TestPki | undefined;
  if (secure || o.tls) {
    mkdirSync(pkiDir);
    pki = createTestPki(pkiDir);
  }
  for (const [name, text] of Object.entries(o.files ?? {})) writeFileSync(join(root, name), text);
  const user = secure ? { user: 'test', pass: randomBytes(12).toString('hex') } : undefined;
  return { pki, user, config: o.config, env: o.env, logDir: o.logDir };
}

function securityLines(sec: Security): string[] {
  const lines: string[] = [];
  if (sec.pki) {
    const p = sec.pki;
    lines.push(
      `tls { cert_file: "${p.serverCertFile}", key_file: "${p.serverKeyFile}", ca_file: "${p.caFile}", verify: true, timeout: 5 }`,
    );
  }
  if (sec.user) lines.push(`authorization { users: [ { user: ${sec.user.user}, password: "${sec.user.pass}" } ] }`);
  if (sec.config) lines.push(sec.config);
  return lines;
}

function clientUrl(port: number, sec: Security): string {
  return sec.user ? `nats://${sec.user.user}:${sec.user.pass}@127.0.0.1:${port}` : `nats://127.0.0.1:${port}`;
}

function clientAuth(sec: Security): NatsAuthOptions {
  return sec.pki ? { tls: { caFile: sec.pki.caFile, certFile: sec.pki.clientCertFile, keyFile: sec.pki.clientKeyFile } } : {};
}

function writeConfig(spec: Omit<NodeSpec, 'config'>, sec: Security, cluster?: { name: string; port: number; routes: number[] }): string {
  const lines = [
    `server_name: ${spec.name}`,
    `listen: 127.0.0.1:${spec.port}`,
    `http: 127.0.0.1:${spec.monitorPort}`,
    `jetstream { store_dir: "${spec.storeDir}" }`,
    ...securityLines(sec),
  ];
  if (cluster) {
    const routes = cluster.routes.map((p) => `"nats://127.0.0.1:${p}"`).join(', ');
    lines.push(`cluster { name: ${cluster.name}, listen: 127.0.0.1:${cluster.port}, routes: [${routes}] }`);
  }
  const file = join(spec.storeDir, '..', `${spec.name}.conf`);
  writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

/** nats.js connect options for `server` (its URL's credentials and TLS files), as the service builds them. */
export async function natsClientOptions(
  server: Pick<NatsServer, 'url' | 'auth'>,
  extra: Partial<NodeConnectionOptions> = {},
): Promise<NodeConnectionOptions> {
  return { ...(await natsConnectOptions(server.url, server.auth)), ...extra };
}

/**
 * The service's settings for a server (or cluster) of this process, given as itself or by its
 * `url`: NATS_URL and the NATS_TLS_* files. Tests that share a server between instances pass
 * its URL around; this finds the TLS files that go with it.
 */
export function natsServiceEnv(server: Pick<NatsServer, 'url' | 'auth'> | string): Record<string, string> {
  if (typeof server === 'string') server = { url: server, auth: authByUrl.get(server) ?? {} };
  const tls = server.auth.tls;
  return {
    NATS_URL: server.url,
    ...(tls?.caFile ? { NATS_TLS_CA: tls.caFile } : {}),
    ...(tls?.certFile ? { NATS_TLS_CERT: tls.certFile } : {}),
    ...(tls?.keyFile ? { NATS_TLS_KEY: tls.keyFile } : {}),
  };
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

/** The last this many characters of a server's log are kept (NatsServer.log()). */
const LOG_TAIL_CHARS = 256 * 1024;

function launch(bin: string, spec: NodeSpec, env: Record<string, string> | undefined, onLog: (text: string) => void): ChildProcess {
  const proc = spawn(bin, ['-c', spec.config], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...env } });
  let tail = '';
  proc.stderr?.on('data', (d: Buffer) => {
    tail = (tail + d.toString()).slice(-4000);
    onLog(d.toString());
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
  proc.kill('SIGCONT'); // a frozen process would hold SIGTERM until the SIGKILL
  return new Promise((resolve) => {
    const timer = setTimeout(() => proc.kill('SIGKILL'), 5000);
    proc.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    proc.kill('SIGTERM');
  });
}

function killProcess(proc: ChildProcess | null): Promise<void> {
  if (!proc || proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    proc.once('exit', () => resolve());
    proc.kill('SIGKILL');
  });
}

function managed(bin: string, spec: NodeSpec, sec: Security, readyTimeoutMs: number, waitReady: boolean) {
  let proc: ChildProcess | null = null;
  let log = '';
  const start = async (): Promise<void> => {
    const file = sec.logDir ? join(sec.logDir, `${spec.name}.log`) : undefined;
    proc = launch(bin, spec, sec.env, (text) => {
      log = (log + text).slice(-LOG_TAIL_CHARS);
      if (file) appendFileSync(file, text);
    });
    if (waitReady) await waitHealthy(spec, proc, readyTimeoutMs);
  };
  const server: NatsServer = {
    url: clientUrl(spec.port, sec),
    address: `nats://127.0.0.1:${spec.port}`,
    auth: clientAuth(sec),
    pki: sec.pki,
    log: () => log,
    port: spec.port,
    name: spec.name,
    monitorUrl: `http://127.0.0.1:${spec.monitorPort}`,
    storeDir: spec.storeDir,
    stop: () => stopProcess(proc),
    kill: () => killProcess(proc),
    freeze: () => void proc?.kill('SIGSTOP'),
    thaw: () => void proc?.kill('SIGCONT'),
    async restart() {
      await stopProcess(proc);
      await start();
      if (!waitReady) await rejoin();
    },
  };
  /**
   * A cluster node restarted has been seen stuck "not current with the meta leader" for the whole
   * 90 s (decision 0084; CI 2026-11-30, a node with an empty store joining a group of two). As an
   * operator would, one that is not current within an attempt's time is restarted again.
   */
  const rejoin = async (): Promise<void> => {
    const attempts = 3;
    const attemptMs = Math.min(readyTimeoutMs, 30_000);
    for (let attempt = 1; ; attempt++) {
      try {
        return await waitHealthy(spec, proc!, attemptMs);
      } catch (err) {
        if (attempt === attempts || !/not current with the meta leader/.test((err as Error).message)) throw err;
        process.stderr.write(`nats-server ${spec.name}: ${(err as Error).message}; restarting it (attempt ${attempt + 1})\n`);
        await stopProcess(proc);
        await start();
      }
    }
  };
  const jsz = async (): Promise<MetaCluster | undefined> => {
    const res = await fetch(`http://127.0.0.1:${spec.monitorPort}/jsz`).catch(() => null);
    return res?.ok ? ((await res.json()) as { meta_cluster?: MetaCluster }).meta_cluster : undefined;
  };
  return { server, start, healthy: (timeoutMs = readyTimeoutMs) => waitHealthy(spec, proc!, timeoutMs), jsz };
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
    const full = metas.some(
      (m) => m?.leader && m.replicas?.length === nodes.length - 1 && m.replicas.every((r) => r.current && !r.offline),
    );
    if (full) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`JetStream meta group did not reach ${nodes.length} current peers within ${timeoutMs} ms`);
}

async function nodeSpec(root: string, name: string): Promise<Omit<NodeSpec, 'config'>> {
  return { name, port: await freePort(), monitorPort: await freePort(), storeDir: join(root, name) };
}

/** Spawns a single JetStream nats-server on a free port with a temp store dir. */
export async function startNatsServer(opts: NatsServerOptions = {}): Promise<NatsServer> {
  const { t, readyTimeoutMs = 15_000 } = opts;
  const bin = natsServerBin();
  const root = tempRoot('nats-test-');
  const sec = securityOf(root, opts);
  let running: NatsServer | undefined;
  t?.after(async () => {
    await running?.stop();
    rmSync(root, { recursive: true, force: true });
  });
  // freePort's port is free when asked, not when nats-server binds it: on a busy machine an
  // outgoing socket can take it in between (CI 2026-12-01, "n1 exited with 1" at startup). A
  // server that exits before it is healthy is started again on new ports; a fixed port is not.
  const attempts = opts.port === undefined ? 3 : 1;
  for (let attempt = 1; ; attempt++) {
    const base = await nodeSpec(root, 'n1');
    if (opts.port !== undefined) base.port = opts.port;
    const spec = { ...base, config: writeConfig(base, sec) };
    const { server, start } = managed(bin, spec, sec, readyTimeoutMs, true);
    try {
      await start();
    } catch (err) {
      await server.stop();
      if (attempt === attempts || !/exited with/.test((err as Error).message)) throw err;
      process.stderr.write(`nats-server n1: ${(err as Error).message}; starting it on new ports\n${server.log().slice(-500)}\n`);
      continue;
    }
    running = server;
    authByUrl.set(server.url, server.auth);
    return server;
  }
}

/**
 * Spawns an n-node JetStream cluster (routes on free ports) and waits until the meta group has
 * every node as a current peer. On a loaded machine a fresh meta group has been seen stuck short
 * of that for 90 s (CI, 1 run in many); a cluster that is not formed within one attempt's time is
 * thrown away and started again on new ports and empty store dirs, up to `attempts` times.
 */
export async function startNatsCluster(n = 3, opts: NatsServerOptions & { attempts?: number } = {}): Promise<NatsCluster> {
  const { t, readyTimeoutMs = 90_000, attempts = 3 } = opts;
  const attemptMs = Math.min(readyTimeoutMs, 30_000);
  const bin = natsServerBin();
  const root = tempRoot('nats-cluster-');
  const sec = securityOf(root, opts);
  let nodes: ReturnType<typeof managed>[] = [];
  const stop = async () => {
    await Promise.all(nodes.map((x) => x.server.stop()));
  };
  t?.after(async () => {
    await stop();
    rmSync(root, { recursive: true, force: true });
  });
  const failures: string[] = [];
  for (let attempt = 1; attempt <= attempts; attempt++) {
    // A cluster name of its own: a route port reused by another test's cluster can never join it.
    const clusterName = `test-${randomBytes(4).toString('hex')}`;
    const dir = join(root, `a${attempt}`);
    mkdirSync(dir);
    const bases = await Promise.all(Array.from({ length: n }, (_, i) => nodeSpec(dir, `n${i + 1}`)));
    const routePorts = await Promise.all(bases.map(() => freePort()));
    nodes = bases.map((b, i) =>
      managed(
        bin,
        { ...b, config: writeConfig(b, sec, { name: clusterName, port: routePorts[i]!, routes: routePorts }) },
        sec,
        readyTimeoutMs,
        false,
      ),
    );
    try {
      // Start all first: a node is only healthy once JetStream has a meta leader, which needs a quorum.
      await Promise.all(nodes.map((x) => x.start()));
      await Promise.all(nodes.map((x) => x.healthy(attemptMs)));
      await waitMetaQuorum(nodes, attemptMs);
      const url = nodes.map((x) => x.server.url).join(',');
      authByUrl.set(url, clientAuth(sec));
      return { servers: nodes.map((x) => x.server), url, auth: clientAuth(sec), stop };
    } catch (err) {
      const metas = await Promise.all(nodes.map((x) => x.jsz()));
      failures.push(`attempt ${attempt}: ${(err as Error).message}; meta views: ${JSON.stringify(metas)}`);
      process.stderr.write(`startNatsCluster: ${failures.at(-1)}\n`);
      await stop();
    }
  }
  throw new Error(`NATS cluster did not form in ${attempts} attempts:\n${failures.join('\n')}`);
}

/** JetStream's "no suitable peers for placement": a peer the meta leader still counts offline. */
const NO_PLACEMENT = 10005;

/** Asked again every `everyMs` for up to `deadlineMs`: a cluster that has just changed settles. */
function whileSettling(name: string, everyMs: number, deadlineMs: number) {
  return {
    name,
    maxAttempts: Number.POSITIVE_INFINITY,
    deadlineMs,
    backoff: { firstMs: everyMs, growth: 'constant', maxMs: everyMs, jitter: 'none' },
  } as const;
}

/**
 * Adds a replicated stream on a cluster just formed: its meta leader may still count a peer
 * offline for a moment after every node reported it current (seen in CI under load), and refuses
 * the placement; asked again every 250 ms for up to 30 s.
 */
export async function addReplicatedStream(jsm: JetStreamManager, config: Partial<StreamConfig> & { name: string }): Promise<void> {
  await retry(() => jsm.streams.add(config), whileSettling('test-stream-placement', 250, 30_000), {
    retryable: (err) => (err as { code?: number }).code === NO_PLACEMENT,
  });
}

/**
 * Publishes to a stream just added: a node that has not yet heard of it answers `no responders`
 * (JetStreamNotEnabled; seen in CI at 1.8 s); asked again every 100 ms for up to 15 s.
 */
export async function publishToNewStream(js: JetStreamClient, subject: string, payload: string): Promise<void> {
  await retry(() => js.publish(subject, payload), whileSettling('test-publish-after-add', 100, 15_000), {
    retryable: (err) => (err as Error).name === 'JetStreamNotEnabled',
  });
}
