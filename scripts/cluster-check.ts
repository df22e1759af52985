/**
 * Before a restore (scripts/backup.ts): is the NATS cluster whole? A fresh 3-node cluster whose
 * third node had not joined formed a JetStream group of 2; every health check said ok, and the
 * restore of the R3 streams failed half-way with `no suitable peers for placement` (issue 30
 * item 14). So: every server of NATS_URL must answer JetStream, and a throwaway stream with as
 * many replicas as the backup's streams must be placeable (then it is deleted again).
 */
import { randomBytes } from 'node:crypto';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { natsConnectOptions } from '../src/bus/nats/connect-options.js';

const CHECK_TIMEOUT_MS = 5_000;

export interface ClusterCheckSettings {
  natsUrl: string;
  natsAuth?: Parameters<typeof natsConnectOptions>[1];
}

/** Why one server of NATS_URL cannot take part, or undefined when it answers JetStream. */
async function serverProblem(
  server: string,
  auth: Omit<Awaited<ReturnType<typeof natsConnectOptions>>, 'servers'>,
): Promise<string | undefined> {
  let nc: NatsConnection;
  try {
    nc = await connect({
      servers: server,
      ...auth,
      reconnect: false,
      timeout: CHECK_TIMEOUT_MS,
      name: 'agent-session-service restore check',
    });
  } catch (err) {
    return `${server} (${(err as Error).message})`;
  }
  try {
    const info = (await nc.request('$JS.API.INFO', '', { timeout: CHECK_TIMEOUT_MS })).json<{ error?: { description: string } }>();
    return info.error ? `${server} (server ${nc.info?.server_name}: JetStream: ${info.error.description})` : undefined;
  } catch (err) {
    return `${server} (server ${nc.info?.server_name}: JetStream does not answer: ${(err as Error).message})`;
  } finally {
    await nc.close();
  }
}

/** Creates and deletes a memory stream of `replicas` replicas; the server's refusal, or undefined. */
async function placementProblem(nc: NatsConnection, replicas: number): Promise<string | undefined> {
  const name = `RESTORE_CHECK_${randomBytes(4).toString('hex')}`;
  const config = { name, subjects: [`restore-check.${name}`], storage: 'memory', num_replicas: replicas, max_msgs: 1 };
  const call = async (subject: string, body: unknown) =>
    (await nc.request(subject, JSON.stringify(body), { timeout: CHECK_TIMEOUT_MS * 2 })).json<{ error?: { description: string } }>();
  const created = await call(`$JS.API.STREAM.CREATE.${name}`, config).catch((err: Error) => ({ error: { description: err.message } }));
  if (created.error) return created.error.description;
  await call(`$JS.API.STREAM.DELETE.${name}`, {});
  return undefined;
}

/**
 * Throws, naming the servers that did not join, unless every server of NATS_URL answers
 * JetStream and `replicas` copies of a stream can be placed. `nc` is the restore's connection.
 */
export async function checkClusterWhole(nc: NatsConnection, s: ClusterCheckSettings, replicas: number): Promise<string> {
  const { servers, ...auth } = await natsConnectOptions(s.natsUrl, s.natsAuth);
  const missing = (await Promise.all(servers.map((server) => serverProblem(server, auth)))).filter((p) => p !== undefined);
  const placement = await placementProblem(nc, replicas);
  if (missing.length === 0 && placement === undefined) {
    return `nats: all ${servers.length} server(s) of NATS_URL answer JetStream and ${replicas} replica(s) can be placed`;
  }
  const parts = [
    missing.length > 0 ? `not joined: ${missing.join('; ')}` : undefined,
    placement !== undefined ? `a stream of ${replicas} replica(s), as in the backup, cannot be placed: ${placement}` : undefined,
  ].filter(Boolean);
  throw new Error(
    `restore refused, the NATS cluster is not whole: ${parts.join('; ')}. Start every node and wait until each has ` +
      `joined (every node current in \`nats server report jetstream\` or in /jsz's meta_cluster), then restore again; nothing was changed`,
  );
}
