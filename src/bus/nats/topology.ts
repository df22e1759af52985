import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  RetentionPolicy,
  StorageType,
  type ConsumerConfig,
  type JetStreamClient,
  type JetStreamManager,
  type StreamConfig,
} from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import { nanos } from '@nats-io/nats-core';
import { InvalidRequestError } from '../../errors.js';
import { isAnyUuid } from '../../ids.js';
import type { Logger } from '../../log.js';
import { retry, retryPolicies, waitUntil } from '../../retry/index.js';
import { apiErrorCode, isClusterForming, JetStreamErrorCodes } from './nats-errors.js';

export const TURN_STREAM = 'TURNS';
export const TURN_CONSUMER = 'workers';
export const CLAIM_BUCKET = 'turn_claims';
/** The stream behind the claims bucket (KV buckets are streams named KV_<bucket>). */
export const CLAIM_STREAM = `KV_${CLAIM_BUCKET}`;
/** Claim records outlive any turn; the TTL only sweeps records of sessions that vanished. */
const CLAIM_TTL_MS = 7 * 24 * 3600_000;
/** Upper bound on turns in flight across all workers (the consumer's max_ack_pending). */
const MAX_TURNS_IN_FLIGHT = 10_000;

export interface TopologyOptions {
  /** Number of event streams (EVENTS_0..N-1); fixed once data exists. */
  shards: number;
  /** Replicas of every stream and of the KV bucket (1 single node, 3 in a cluster); existing ones are raised, never lowered. */
  replicas: number;
  /** Dedup window of the streams, in ms. */
  duplicateWindowMs: number;
  /** How long a claimed turn may go without ack or working() before redelivery, in ms. */
  ackWaitMs: number;
}

/** Where one session's events live. */
export interface SessionSubjects {
  shard: number;
  stream: string;
  subject: string;
  live: string;
}

/** A stable shard for a session: FNV-1a over the id, so every process agrees without a lookup. */
export function shardOf(sessionId: string, shards: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < sessionId.length; i++) {
    h ^= sessionId.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % shards;
}

/** Stream and subjects of a session; the id must be a UUID (it becomes a subject token). */
export function sessionSubjects(sessionId: string, shards: number): SessionSubjects {
  assertUuid(sessionId);
  const k = shardOf(sessionId, shards);
  return { shard: k, stream: `EVENTS_${k}`, subject: `evt.${k}.${sessionId}`, live: `live.${k}.${sessionId}` };
}

/** Every session's live events of shard `k` (one wildcard subscription, live-subscriptions.ts). */
export function liveShardSubject(k: number): string {
  return `live.${k}.*`;
}

/** The TURNS subject of a session: at most one message lives there (its queued or running turn). */
export function turnSubject(sessionId: string): string {
  assertUuid(sessionId);
  return `turn.${sessionId}`;
}

/** The core subject of a session's signals; `*` (default) subscribes to every type. */
export function controlSubject(sessionId: string, type = '*'): string {
  assertUuid(sessionId);
  return `ctl.${sessionId}.${type}`;
}

/** Throws InvalidRequestError unless `value` is a UUID: ids become subject tokens, and a dot or wildcard would address other sessions. */
export function assertUuid(value: string): void {
  if (!isAnyUuid(value)) throw new InvalidRequestError(`Invalid id: ${value}`);
}

function eventStreamConfig(k: number, o: TopologyOptions): Partial<StreamConfig> & { name: string } {
  return {
    name: `EVENTS_${k}`,
    subjects: [`evt.${k}.*`],
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    num_replicas: o.replicas,
    allow_direct: true,
    duplicate_window: nanos(o.duplicateWindowMs),
    // Stored events only are republished, with Nats-Sequence / Nats-Last-Sequence for gap checks.
    republish: { src: `evt.${k}.*`, dest: `live.${k}.{{wildcard(1)}}` },
  };
}

function turnStreamConfig(o: TopologyOptions): Partial<StreamConfig> & { name: string } {
  return {
    name: TURN_STREAM,
    subjects: ['turn.*'],
    storage: StorageType.File,
    retention: RetentionPolicy.Workqueue,
    num_replicas: o.replicas,
    // One message per session subject, and the server refuses the second: the busy check.
    max_msgs_per_subject: 1,
    discard: DiscardPolicy.New,
    discard_new_per_subject: true,
    duplicate_window: nanos(o.duplicateWindowMs),
  };
}

function workersConfig(o: TopologyOptions): Partial<ConsumerConfig> {
  return {
    durable_name: TURN_CONSUMER,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: nanos(o.ackWaitMs),
    max_deliver: -1,
    max_ack_pending: MAX_TURNS_IN_FLIGHT,
  };
}

/**
 * Runs `op`, retrying while the cluster is still forming: servers started together answer
 * "no suitable peers" until they have heard from each other, which is not a config error.
 * `transient` names further errors that pass on their own.
 */
async function whileClusterForms<T>(op: () => Promise<T>, log: Logger, transient = isClusterForming): Promise<T> {
  return retry(op, retryPolicies.clusterForming, {
    retryable: transient,
    onRetry: ({ err, attempt }) => {
      if (attempt === 1) log.info({ err }, 'JetStream cluster still forming, retrying');
    },
  });
}

/**
 * Runs `op` on a stream ensured a moment ago. The stream's own leader answers its creation, and
 * the meta leader says "stream not found" for it until it has applied that creation too (seen
 * with several instances starting together on a new cluster; nats-server PR #8410 fixed it for
 * consumer creates only): for a moment that answer means "not yet", not "missing".
 */
function onNewStream<T>(op: () => Promise<T>, log: Logger): Promise<T> {
  return whileClusterForms(op, log, (err) => isClusterForming(err) || apiErrorCode(err) === JetStreamErrorCodes.StreamNotFound);
}

async function ensureStream(jsm: JetStreamManager, config: Partial<StreamConfig> & { name: string }, log: Logger): Promise<void> {
  const current = await whileClusterForms(() => currentReplicas(jsm, config.name), log);
  const target = { ...config, num_replicas: replicasToKeep(config.name, current, config.num_replicas ?? 1, log) };
  try {
    await whileClusterForms(() => jsm.streams.add(target), log);
  } catch (err) {
    if (apiErrorCode(err) !== JetStreamErrorCodes.StreamNameInUse) throw err;
    // Exists with other settings (e.g. a changed duplicate window or fewer replicas): converge on ours.
    log.info({ stream: config.name }, 'updating stream configuration');
    await whileClusterForms(() => jsm.streams.update(config.name, target), log);
  }
  if (current !== null && current < target.num_replicas) await waitForReplicas(jsm, config.name, target.num_replicas, log);
}

/**
 * After a replica change the stream elects a new leader, and until then its API requests
 * (message gets, publishes) go unanswered; start-up waits so the first append does not time out.
 * Gives up with a warning after retryPolicies.streamReplicas' deadline: the stream still works once it settles.
 */
async function waitForReplicas(jsm: JetStreamManager, stream: string, replicas: number, log: Logger): Promise<void> {
  const settled = async () => {
    const cluster = await jsm.streams.info(stream).then(
      (i) => i.cluster,
      () => undefined,
    );
    const peers = cluster?.replicas ?? [];
    return !!cluster?.leader && peers.length === replicas - 1 && peers.every((p) => p.current);
  };
  if (await waitUntil(settled, retryPolicies.streamReplicas)) return;
  log.warn({ stream, replicas }, 'stream replicas not settled yet; continuing');
}

/** Replicas of an existing stream, or null when there is none yet. */
async function currentReplicas(jsm: JetStreamManager, stream: string): Promise<number | null> {
  try {
    return (await jsm.streams.info(stream)).config.num_replicas;
  } catch (err) {
    if (apiErrorCode(err) === JetStreamErrorCodes.StreamNotFound) return null;
    throw err;
  }
}

/**
 * Raises replicas to the wanted count but never lowers them: `auto` may see fewer servers
 * while a cluster restarts, and shrinking a replicated stream is an operator's decision.
 */
function replicasToKeep(stream: string, current: number | null, wanted: number, log: Logger): number {
  if (current === null || current === wanted) return wanted;
  if (current < wanted) {
    log.info({ stream, from: current, to: wanted }, 'raising stream replicas');
    return wanted;
  }
  log.info({ stream, replicas: current, wanted }, 'stream keeps more replicas than wanted; lower them with the nats CLI if intended');
  return current;
}

/** The claims bucket exists with fewer replicas than wanted: raise them (Kvm.create leaves an existing bucket as it is). */
async function ensureBucketReplicas(jsm: JetStreamManager, stream: string, wanted: number, log: Logger): Promise<void> {
  const info = await onNewStream(() => jsm.streams.info(stream), log);
  const replicas = replicasToKeep(stream, info.config.num_replicas, wanted, log);
  if (replicas === info.config.num_replicas) return;
  await onNewStream(() => jsm.streams.update(stream, { ...info.config, num_replicas: replicas }), log);
  await waitForReplicas(jsm, stream, replicas, log);
}

async function ensureConsumer(jsm: JetStreamManager, stream: string, config: Partial<ConsumerConfig>, log: Logger): Promise<void> {
  try {
    await jsm.consumers.add(stream, config);
  } catch (err) {
    if (apiErrorCode(err) !== JetStreamErrorCodes.ConsumerAlreadyExists) throw err;
    log.info({ stream, consumer: config.durable_name }, 'updating consumer configuration');
    await jsm.consumers.update(stream, config.durable_name!, config);
  }
}

/** Creates (or converges) every stream, the workers consumer and the claims bucket; idempotent. */
export async function ensureTopology(jsm: JetStreamManager, js: JetStreamClient, o: TopologyOptions, log: Logger): Promise<KV> {
  for (let k = 0; k < o.shards; k++) await ensureStream(jsm, eventStreamConfig(k, o), log);
  await ensureStream(jsm, turnStreamConfig(o), log);
  await onNewStream(() => ensureConsumer(jsm, TURN_STREAM, workersConfig(o), log), log);
  const kv = await whileClusterForms(() => new Kvm(js).create(CLAIM_BUCKET, { history: 1, replicas: o.replicas, ttl: CLAIM_TTL_MS }), log);
  await ensureBucketReplicas(jsm, CLAIM_STREAM, o.replicas, log);
  return kv;
}
