import { JetStreamApiError, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { Logger } from '../../log.js';
import type { Bus, LoggedEvent } from '../ports.js';
import { holding } from '../session-event.js';
import { createLeaderGet } from './leader-get.js';
import { createAckedPublisher } from './acked-publisher.js';
import { natsConnectOptions, type NatsAuthConnectOptions, type NatsAuthOptions } from './connect-options.js';
import { createNatsEventLog } from './event-log.js';
import { DEFAULT_LIVE_WILDCARD_MIN_SESSIONS } from './live-subscriptions.js';
import { chooseReplicas, type ReplicasSetting } from './replicas.js';
import { createNatsSignals } from './signals.js';
import { shareRequestCancelError } from './request-cancel.js';
import { coalesceSocketWrites } from './write-coalescing.js';
import { CLAIM_BUCKET, CLAIM_STREAM, ensureTopology } from './topology.js';
import { createHealthProbe, HEALTH_PROBE_KEY } from './health-probe.js';
import { apiErrorCode, isClusterForming, JetStreamErrorCodes } from './nats-errors.js';
import { createNatsTurnQueue } from './turn-queue.js';
import { RecencyMap } from '../recency-map.js';
import { startOpsService } from './ops-service.js';
import { type PhaseTimer, untimed } from '../../start-phases.js';
import { retrier, retryPolicies } from '../../retry/index.js';
import { checkNatsPermissions, type ServiceRole } from './permission-probe.js';

export const DEFAULT_SHARDS = 1;
export const DEFAULT_ACK_WAIT_MS = 60_000;
export const DEFAULT_DUPLICATE_WINDOW_MS = 120_000;
export const DEFAULT_RECONNECT_WAIT_MS = 250;
export const DEFAULT_LIVE_POLL_MS = 5_000;
/** An idle session's poll backs off to this (a reconnect re-reads every feed at once instead). */
export const DEFAULT_LIVE_POLL_MAX_MS = 300_000;
export const DEFAULT_FIND_SKEW_MS = 10_000;
export const DEFAULT_REQUEST_TIMEOUT_MS = 5_000;
const DRAIN_TIMEOUT_MS = 2_000;
/** New sessions remembered until their first claim; a turn claimed later than this reads the record first. */
const MAX_NEVER_CLAIMED = 10_000;
const NEVER_CLAIMED_IDLE_MS = 60_000;
/**
 * Client pings: a server that stops answering (frozen, not closed: its socket stays open) is
 * taken for gone after MAX_PINGS_OUT unanswered pings, and the client moves to another node;
 * nats.js's default of one ping per 2 minutes left an instance on a frozen node cut off that long.
 */
export const DEFAULT_PING_INTERVAL_MS = 1_500;
const MAX_PINGS_OUT = 2;
/**
 * A server's handshake must finish within this, in ms. A frozen server's kernel still accepts
 * the TCP connection, so a reconnect that picked it waited out nats.js's 20 s default before
 * trying a live node.
 */
const HANDSHAKE_TIMEOUT_MS = 2_000;

export interface NatsBusOptions {
  /**
   * One server URL or several, comma-separated (`nats://n1:4222,nats://n2:4222`); may carry
   * `user:pass@` or `token@`, and `tls://` requires TLS (nats-url.ts). Never logged.
   */
  url: string;
  /** Creds file, nkey seed and TLS files (connect-options.ts). */
  auth?: NatsAuthOptions;
  log: Logger;
  /** Event streams EVENTS_0..N-1 (default 1). Fixed once data exists: it decides where sessions live. */
  shards?: number;
  /** Stream and bucket replicas, 1-5, or `auto` (default): min(3, servers in the cluster); see replicas.ts. */
  replicas?: ReplicasSetting;
  /** Turn lease: redelivery after this long without ack or heartbeat, in ms (default 60000). */
  ackWaitMs?: number;
  /** Stream dedup window, in ms (default 120000). */
  duplicateWindowMs?: number;
  /** Pause between reconnect attempts, in ms (default 250); attempts never stop. */
  reconnectWaitMs?: number;
  /** Idle live subscribers re-check the log this often, in ms (default 5000)… */
  livePollMs?: number;
  /** …doubling while the checks find nothing, up to this, in ms (default 300 000; a reconnect re-reads every feed). */
  livePollMaxMs?: number;
  /** Clock-skew margin of findById's start-time lookup, in ms (default 10000). */
  findSkewMs?: number;
  /**
   * Watched sessions of one shard from which its live events come through one `live.<k>.*`
   * subscription instead of one per session (default 1000; back below half; 0 = never).
   */
  liveWildcardMinSessions?: number;
  /** JetStream API and publish timeout, in ms (default 5000). */
  requestTimeoutMs?: number;
  /** Client ping interval, in ms (default 1500): a stalled server is left after two unanswered pings. */
  pingIntervalMs?: number;
  /** Connection name shown by the server (monitoring). */
  name?: string;
  /** How long start-up waits for a server and for JetStream, in ms (default: as long as it takes). */
  startWaitMs?: number;
  /** Times the start's `nats.connect` and `nats.streams` phases (each attempt's). */
  phases?: PhaseTimer;
  /** The instance's ROLE: its login must hold the permissions the role needs, or the start stops (permission-probe.ts). */
  role?: ServiceRole;
}

/**
 * The distributed bus on NATS JetStream. Connects (reconnecting forever), creates or converges
 * the streams, consumer and bucket, and wires the three ports onto one connection.
 */
export async function createNatsBus<E extends LoggedEvent = LoggedEvent>(opts: NatsBusOptions): Promise<Bus<E>> {
  const shards = opts.shards ?? DEFAULT_SHARDS;
  const ackWaitMs = opts.ackWaitMs ?? DEFAULT_ACK_WAIT_MS;
  const duplicateWindowMs = opts.duplicateWindowMs ?? DEFAULT_DUPLICATE_WINDOW_MS;
  const timeout = opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  if (!Number.isInteger(shards) || shards < 1) throw new RangeError('shards must be an integer >= 1');
  if (ackWaitMs < 1000) throw new RangeError('ackWaitMs must be >= 1000');
  const log = opts.log.child({ component: 'bus', kind: 'nats' });

  const { servers, ...auth } = await natsConnectOptions(opts.url, opts.auth);
  // Cold start: nats-server may come up after the instances (compose, Kubernetes), and a fresh
  // cluster answers JetStream requests only once it has a meta leader. Wait for both, saying
  // what for, instead of exiting; errors that waiting cannot fix (credentials, permissions,
  // configuration) still stop the start at once.
  const policy = { ...retryPolicies.natsReconnect, ...(opts.startWaitMs !== undefined ? { deadlineMs: opts.startWaitMs } : {}) };
  const stage: StartStage = { waitingFor: 'server' };
  const attempts = retrier(policy, {
    retryable: isRetryableStartError,
    onRetry: ({ err, attempt, pauseMs }) => {
      log.warn(
        { waiting_for: stage.waitingFor, servers, attempt, retry_in_ms: pauseMs, reason: (err as Error).message },
        `waiting for ${waitingFor(stage, err, servers)}; retrying in ${pauseMs} ms`,
      );
    },
  });
  for (;;) {
    stage.waitingFor = 'server';
    try {
      return await openNatsBus(opts, { servers, auth, log, shards, ackWaitMs, duplicateWindowMs, timeout }, stage);
    } catch (err) {
      if (!(await attempts.failed(err))) throw err;
    }
  }
}

/** What a start attempt waits for, as the warning says it. */
function waitingFor(stage: StartStage, err: unknown, servers: string[]): string {
  if (stage.waitingFor === 'server') return `a NATS server to accept connections at ${servers.join(',')}`;
  // "No suitable peers for placement": the meta leader is there, a node is not (issue 30 item 14).
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (apiErrorCode(e) === JetStreamErrorCodes.ClusterNoPeers) {
      return 'more JetStream nodes to join the cluster (the streams need more replicas than nodes have joined: a node is down or its routes do not reach the others)';
    }
  }
  return 'JetStream to answer (stream setup; a new cluster elects its meta leader first)';
}

/** What a start attempt got to: `server` (connecting) or `jetstream` (connected, setting up streams). */
interface StartStage {
  waitingFor: 'server' | 'jetstream';
}

interface StartSettings {
  servers: string[];
  auth: Omit<NatsAuthConnectOptions, 'servers'>;
  log: Logger;
  shards: number;
  ackWaitMs: number;
  duplicateWindowMs: number;
  timeout: number;
}

/** Start-up failures no wait fixes, by error name and by message (TLS set-up errors have no name of their own). */
const FATAL_START_ERRORS = ['AuthorizationError', 'UserAuthenticationExpiredError', 'PermissionViolationError', 'InvalidArgumentError'];
const FATAL_START_MESSAGE = /authoriz|authentic|permission|certificate|tls|ssl/i;

/**
 * True for start-up failures that a later attempt may not have: no server listening, a
 * request that timed out or found no JetStream responder, a cluster still forming. Not for
 * refused credentials or permissions, TLS mismatches or invalid configuration.
 */
export function isRetryableStartError(err: unknown): boolean {
  const chain: Error[] = [];
  for (let e: unknown = err; e instanceof Error && chain.length < 8; e = e.cause) chain.push(e);
  if (chain.some((e) => FATAL_START_ERRORS.includes(e.name) || FATAL_START_MESSAGE.test(e.message))) return false;
  for (const e of chain) {
    if (isClusterForming(e)) return true;
    if (['ConnectionError', 'TimeoutError', 'NoResponders', 'ClosedConnectionError'].includes(e.name)) return true;
    // JetStream "temporarily unavailable" (503) while a server starts.
    if (e instanceof JetStreamApiError && e.status === 503) return true;
  }
  return false;
}

async function openNatsBus<E extends LoggedEvent>(opts: NatsBusOptions, settings: StartSettings, stage: StartStage): Promise<Bus<E>> {
  const { servers, auth, log, shards, ackWaitMs, duplicateWindowMs, timeout } = settings;
  const phases = opts.phases ?? untimed;
  const nc = await phases.time('nats.connect', () =>
    connect({
      servers,
      ...auth,
      name: opts.name ?? 'agent-session-service',
      maxReconnectAttempts: -1,
      reconnectTimeWait: opts.reconnectWaitMs ?? DEFAULT_RECONNECT_WAIT_MS,
      pingInterval: opts.pingIntervalMs ?? DEFAULT_PING_INTERVAL_MS,
      maxPingOut: MAX_PINGS_OUT,
      timeout: HANDSHAKE_TIMEOUT_MS,
      // Otherwise nats.js captures a stack trace (new Error) for every request and publish, about
      // 8 % of the service's CPU under turn load; errors still carry the server's message and code.
      noAsyncTraces: true,
    }).catch((err: unknown) => {
      // The servers as configured, without credentials: "Authorization Violation" alone says not where.
      throw new Error(`cannot connect to NATS (${servers.join(',')}): ${(err as Error).message}`, { cause: err });
    }),
  );
  stage.waitingFor = 'jetstream';
  try {
    if (!coalesceSocketWrites(nc)) log.warn('nats.js transport changed shape: socket writes are not coalesced');
    if (!shareRequestCancelError()) log.warn('nats.js request class changed shape: every request still builds a cancel error');
    const js = jetstream(nc, { timeout });
    const jsm = await jetstreamManager(nc, { timeout });
    const choice = chooseReplicas(opts.replicas ?? 'auto', nc.info, servers);
    if (choice.source === 'auto' && choice.counted === 'configured_urls' && choice.servers === 1) {
      log.warn(
        { cluster: nc.info?.cluster },
        'NATS cluster does not advertise its servers (no_advertise) and NATS_URL names one; using 1 replica, set NATS_REPLICAS',
      );
    }
    log.info({ auth: authMethod(auth), tls: auth.tls !== undefined }, 'connected to NATS');
    log.info({ replicas: choice.replicas, source: choice.source, servers: choice.servers, counted: choice.counted }, 'JetStream replicas');
    const kv = await phases.time('nats.streams', () =>
      ensureTopology(jsm, js, { shards, replicas: choice.replicas, duplicateWindowMs, ackWaitMs }, log),
    );
    const role = opts.role;
    if (role) await phases.time('nats.permissions', () => checkNatsPermissions(nc, jsm, role, shards));
    let onReconnect = () => {};
    void watchStatus(nc, log, () => onReconnect());
    const publisher = createAckedPublisher(nc, { timeoutMs: timeout });
    const getMessage = await createLeaderGet(nc, { timeoutMs: timeout });
    const ping = await createHealthProbe(nc, log, [
      { stream: CLAIM_STREAM, subject: `$KV.${CLAIM_BUCKET}.${HEALTH_PROBE_KEY}` },
      ...Array.from({ length: shards }, (_, k) => ({ stream: `EVENTS_${k}`, subject: `evt.${k}.${HEALTH_PROBE_KEY}` })),
    ]);
    // Sessions whose first event this process stored: turns are enqueued after a session's
    // first event, so none of theirs was claimed before (a hint only: the claim's
    // compare-and-set still decides).
    const neverClaimed = new RecencyMap<string, true>({ max: MAX_NEVER_CLAIMED, idleMs: NEVER_CLAIMED_IDLE_MS });
    const takeNeverClaimed = (sessionId: string) => {
      const hit = neverClaimed.get(sessionId) !== undefined;
      neverClaimed.delete(sessionId);
      return hit;
    };
    const events = createNatsEventLog({
      nc,
      js,
      jsm,
      getMessage,
      shards,
      log,
      duplicateWindowMs,
      publisher,
      livePollMs: opts.livePollMs ?? DEFAULT_LIVE_POLL_MS,
      livePollMaxMs: Math.max(opts.livePollMs ?? DEFAULT_LIVE_POLL_MS, opts.livePollMaxMs ?? DEFAULT_LIVE_POLL_MAX_MS),
      findSkewMs: opts.findSkewMs ?? DEFAULT_FIND_SKEW_MS,
      liveWildcardMinSessions: opts.liveWildcardMinSessions ?? DEFAULT_LIVE_WILDCARD_MIN_SESSIONS,
      onFirstEvent: (sessionId) => neverClaimed.set(sessionId, true),
    });
    onReconnect = () => events.staleAll();
    return {
      kind: 'nats',
      events: holding<E>(events),
      turns: createNatsTurnQueue({ js, jsm, getMessage, kv, log, publisher, nc, releaseRetryMs: ackWaitMs, takeNeverClaimed }),
      signals: createNatsSignals({ nc, log }),
      serveOps: (o, hooks) => startOpsService(nc, o, hooks, log),
      /** This instance can serve: its connection answers and its streams are readable (health-probe.ts). */
      ping,
      async close() {
        events.closeAll();
        await closeConnection(nc);
        publisher.close();
      },
    };
  } catch (err) {
    await nc.close();
    throw err;
  }
}

/** How the connection authenticates, for the log (never the credentials). */
function authMethod(o: Omit<NatsAuthConnectOptions, 'servers'>): string {
  if (o.user !== undefined) return 'user_password';
  if (o.token !== undefined) return 'token';
  if (o.authenticator) return 'authenticator';
  return 'none';
}

async function watchStatus(nc: NatsConnection, log: Logger, onReconnect: () => void): Promise<void> {
  for await (const s of nc.status()) {
    if (s.type === 'disconnect' || s.type === 'error') log.warn({ status: s.type }, 'nats connection');
    else if (s.type === 'reconnect') {
      log.info({ status: s.type }, 'nats connection');
      onReconnect();
    }
  }
}

async function closeConnection(nc: NatsConnection): Promise<void> {
  if (nc.isClosed()) return;
  // Drain lets in-flight acks and publishes finish; a dead server must not hold up shutdown.
  const timer = new Promise((resolve) => setTimeout(resolve, DRAIN_TIMEOUT_MS).unref());
  await Promise.race([nc.drain().catch(() => undefined), timer]);
  if (!nc.isClosed()) await nc.close();
}
