import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { Logger } from '../../log.js';
import type { Bus } from '../ports.js';
import { createNatsEventLog } from './event-log.js';
import { createNatsSignals } from './signals.js';
import { ensureTopology } from './topology.js';
import { createNatsTurnQueue } from './turn-queue.js';

export const DEFAULT_SHARDS = 1;
export const DEFAULT_REPLICAS = 1;
export const DEFAULT_ACK_WAIT_MS = 60_000;
export const DEFAULT_DUPLICATE_WINDOW_MS = 120_000;
export const DEFAULT_RECONNECT_WAIT_MS = 250;
export const DEFAULT_LIVE_POLL_MS = 5_000;
export const DEFAULT_FIND_SKEW_MS = 10_000;
export const DEFAULT_REQUEST_TIMEOUT_MS = 5_000;
const DRAIN_TIMEOUT_MS = 2_000;

export interface NatsBusOptions {
  /** One server URL or several, comma-separated (`nats://n1:4222,nats://n2:4222`). */
  url: string;
  log: Logger;
  /** Event streams EVENTS_0..N-1 (default 1). Fixed once data exists: it decides where sessions live. */
  shards?: number;
  /** Stream and bucket replicas (default 1; 3 in a cluster). */
  replicas?: number;
  /** Turn lease: redelivery after this long without ack or heartbeat, in ms (default 60000). */
  ackWaitMs?: number;
  /** Stream dedup window, in ms (default 120000). */
  duplicateWindowMs?: number;
  /** Pause between reconnect attempts, in ms (default 250); attempts never stop. */
  reconnectWaitMs?: number;
  /** Idle live subscribers re-check the log this often, in ms (default 5000). */
  livePollMs?: number;
  /** Clock-skew margin of findById's start-time lookup, in ms (default 10000). */
  findSkewMs?: number;
  /** JetStream API and publish timeout, in ms (default 5000). */
  requestTimeoutMs?: number;
  /** Connection name shown by the server (monitoring). */
  name?: string;
}

/**
 * The distributed bus on NATS JetStream. Connects (reconnecting forever), creates or converges
 * the streams, consumer and bucket, and wires the three ports onto one connection.
 */
export async function createNatsBus(opts: NatsBusOptions): Promise<Bus> {
  const shards = opts.shards ?? DEFAULT_SHARDS;
  const ackWaitMs = opts.ackWaitMs ?? DEFAULT_ACK_WAIT_MS;
  const duplicateWindowMs = opts.duplicateWindowMs ?? DEFAULT_DUPLICATE_WINDOW_MS;
  const timeout = opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  if (!Number.isInteger(shards) || shards < 1) throw new RangeError('shards must be an integer >= 1');
  if (ackWaitMs < 1000) throw new RangeError('ackWaitMs must be >= 1000');
  const log = opts.log.child({ component: 'bus', kind: 'nats' });

  const nc = await connect({
    servers: opts.url.split(',').map((s) => s.trim()).filter(Boolean),
    name: opts.name ?? 'agent-session-service',
    maxReconnectAttempts: -1,
    reconnectTimeWait: opts.reconnectWaitMs ?? DEFAULT_RECONNECT_WAIT_MS,
  });
  try {
    const js = jetstream(nc, { timeout });
    const jsm = await jetstreamManager(nc, { timeout });
    const kv = await ensureTopology(jsm, js, { shards, replicas: opts.replicas ?? DEFAULT_REPLICAS, duplicateWindowMs, ackWaitMs }, log);
    void watchStatus(nc, log);
    const events = createNatsEventLog({
      nc, js, jsm, shards, log, duplicateWindowMs,
      livePollMs: opts.livePollMs ?? DEFAULT_LIVE_POLL_MS,
      findSkewMs: opts.findSkewMs ?? DEFAULT_FIND_SKEW_MS,
    });
    return {
      kind: 'nats',
      events,
      turns: createNatsTurnQueue({ js, jsm, kv, log }),
      signals: createNatsSignals({ nc, log }),
      async ping() {
        await nc.rtt(); // throws at once while disconnected
        await jsm.getAccountInfo(); // and JetStream must answer, not just the server
      },
      async close() {
        events.closeAll();
        await closeConnection(nc);
      },
    };
  } catch (err) {
    await nc.close();
    throw err;
  }
}

async function watchStatus(nc: NatsConnection, log: Logger): Promise<void> {
  for await (const s of nc.status()) {
    if (s.type === 'disconnect' || s.type === 'error') log.warn({ status: s.type }, 'nats connection');
    else if (s.type === 'reconnect') log.info({ status: s.type }, 'nats connection');
  }
}

async function closeConnection(nc: NatsConnection): Promise<void> {
  if (nc.isClosed()) return;
  // Drain lets in-flight acks and publishes finish; a dead server must not hold up shutdown.
  const timer = new Promise((resolve) => setTimeout(resolve, DRAIN_TIMEOUT_MS).unref());
  await Promise.race([nc.drain().catch(() => undefined), timer]);
  if (!nc.isClosed()) await nc.close();
}
