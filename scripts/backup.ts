/**
 * Backup and restore of a distributed deployment: PostgreSQL and the JetStream streams together
 * (docs/operations.md, section 22).
 *
 *   node --import tsx scripts/backup.ts backup  <dir>   # pg_dump, then a snapshot of every stream
 *   node --import tsx scripts/backup.ts restore <dir>   # streams first, then the database
 *
 * Settings are the service's own (DATABASE_URL, NATS_URL, NATS_CREDS / NATS_NKEY_SEED / NATS_TLS_*),
 * read by src/config.ts. Needs `pg_dump` / `pg_restore` of the server's major version or newer on
 * PATH, and a NATS login that may call `$JS.API.STREAM.SNAPSHOT.>` / `RESTORE.>` (an operator
 * account, not the service's users of deploy/nats/auth.conf).
 *
 * Order: the database is dumped first and the streams right after, so the event log holds at
 * least every event of every session in the dump (a session created in between has events but
 * no row, and stays invisible). Restore wants an empty database and no streams of these names;
 * no instance may run until it finished (instances would create empty streams), and every NATS
 * node must have joined the cluster (scripts/cluster-check.ts; checked before anything is restored).
 *
 * Stream snapshots use the JetStream snapshot API (what `nats stream backup` does): the server
 * sends the stream as chunks of an s2-compressed tar with flow-control acks; restore sends them
 * back. Files: postgres.dump (pg_dump custom format), streams.json (configs and states),
 * stream-<name>.snapshot.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createInbox, type NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import pg from 'pg';
import { loadConfig } from '../src/config.js';
import { natsConnectOptions } from '../src/bus/nats/connect-options.js';
import { checkClusterWhole } from './cluster-check.js';

const CHUNK_BYTES = 128 * 1024;
const API_TIMEOUT_MS = 30_000;

interface StreamBackup {
  name: string;
  config: Record<string, unknown>;
  state: Record<string, unknown>;
  file: string;
  bytes: number;
}

export interface BackupSettings {
  databaseUrl: string;
  natsUrl: string;
  natsAuth?: Parameters<typeof natsConnectOptions>[1];
  log?: (line: string) => void;
}

async function natsConnect(s: BackupSettings): Promise<NatsConnection> {
  const { servers, ...auth } = await natsConnectOptions(s.natsUrl, s.natsAuth);
  return connect({ servers, ...auth, name: 'agent-session-service backup' });
}

async function api<T>(nc: NatsConnection, subject: string, body: unknown): Promise<T> {
  const res = (await nc.request(subject, JSON.stringify(body ?? {}), { timeout: API_TIMEOUT_MS })).json<
    T & { error?: { code: number; description: string } }
  >();
  if (res.error) throw new Error(`${subject}: ${res.error.description} (${res.error.code})`);
  return res;
}

/** Dumps the database, then snapshots every stream, into `dir`. */
export async function backup(dir: string, s: BackupSettings): Promise<{ streams: StreamBackup[] }> {
  const log = s.log ?? console.log;
  mkdirSync(dir, { recursive: true });
  run('pg_dump', ['--format=custom', '--no-owner', `--file=${join(dir, 'postgres.dump')}`, `--dbname=${s.databaseUrl}`]);
  log('postgres: dumped to postgres.dump');
  const nc = await natsConnect(s);
  try {
    const names: string[] = [];
    for (let offset = 0; ; ) {
      const page = await api<{ streams: string[] | null; total: number; limit: number }>(nc, '$JS.API.STREAM.NAMES', { offset });
      names.push(...(page.streams ?? []));
      offset += page.limit;
      if (offset >= page.total) break;
    }
    const streams: StreamBackup[] = [];
    for (const name of names.sort()) {
      const b = await snapshotStream(nc, name, dir);
      log(`stream ${name}: ${(b.state as { messages?: number }).messages ?? '?'} messages, ${b.bytes} bytes`);
      streams.push(b);
    }
    writeFileSync(join(dir, 'streams.json'), JSON.stringify(streams, null, 2) + '\n');
    return { streams };
  } finally {
    await nc.close();
  }
}

async function snapshotStream(nc: NatsConnection, name: string, dir: string): Promise<StreamBackup> {
  const deliver = createInbox();
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  const sub = nc.subscribe(deliver);
  const done = (async () => {
    for await (const m of sub) {
      if (m.data.length === 0) {
        // End of the snapshot; a status header other than 204 says why it stopped early.
        const code = m.headers?.code ?? 204;
        if (code !== 204 && code !== 0) throw new Error(`snapshot of ${name} ended with ${code} ${m.headers?.description ?? ''}`);
        return;
      }
      chunks.push(m.data);
      bytes += m.data.length;
      if (m.reply) m.respond(); // flow control: the server waits for acks past its window
    }
  })();
  try {
    const res = await api<{ config: Record<string, unknown>; state: Record<string, unknown> }>(nc, `$JS.API.STREAM.SNAPSHOT.${name}`, {
      deliver_subject: deliver,
      chunk_size: CHUNK_BYTES,
      no_consumers: false,
    });
    await done;
    const file = `stream-${name}.snapshot`;
    writeFileSync(join(dir, file), Buffer.concat(chunks));
    return { name, config: res.config, state: res.state, file, bytes };
  } finally {
    sub.unsubscribe();
  }
}

/** Restores the streams of `dir`, then the database (which must be empty or missing). */
export async function restore(dir: string, s: BackupSettings): Promise<void> {
  const log = s.log ?? console.log;
  const streams = JSON.parse(readFileSync(join(dir, 'streams.json'), 'utf8')) as StreamBackup[];
  const nc = await natsConnect(s);
  try {
    // Every node must have joined before anything is restored (cluster-check.ts).
    const replicas = Math.max(1, ...streams.map((b) => Number(b.config['num_replicas'] ?? 1)));
    log(await checkClusterWhole(nc, s, replicas));
    for (const b of streams) {
      const res = await api<{ deliver_subject: string }>(nc, `$JS.API.STREAM.RESTORE.${b.name}`, { config: b.config, state: b.state });
      const data = readFileSync(join(dir, b.file));
      for (let off = 0; off < data.length; off += CHUNK_BYTES) {
        await nc.request(res.deliver_subject, data.subarray(off, off + CHUNK_BYTES), { timeout: API_TIMEOUT_MS });
      }
      const final = (await nc.request(res.deliver_subject, new Uint8Array(0), { timeout: 120_000 })).json<{
        error?: { description: string };
      }>();
      if (final.error) throw new Error(`restore of stream ${b.name}: ${final.error.description}`);
      log(`stream ${b.name}: restored`);
    }
  } finally {
    await nc.close();
  }
  await ensureEmptyDatabase(s.databaseUrl);
  run('pg_restore', ['--no-owner', '--exit-on-error', '--single-transaction', `--dbname=${s.databaseUrl}`, join(dir, 'postgres.dump')]);
  log('postgres: restored from postgres.dump');
}

/** Creates the database when missing; refuses one that already has tables. */
async function ensureEmptyDatabase(databaseUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  try {
    await client.connect();
  } catch (err) {
    if ((err as { code?: string }).code !== '3D000') throw err;
    const admin = new URL(databaseUrl);
    const name = decodeURIComponent(admin.pathname.slice(1));
    admin.pathname = '/postgres';
    const c = new pg.Client({ connectionString: admin.toString() });
    await c.connect();
    await c.query(`create database "${name.replaceAll('"', '""')}"`);
    await c.end();
    return;
  }
  const { rows } = await client.query("select count(*)::int as n from information_schema.tables where table_schema = 'public'");
  await client.end();
  if (rows[0].n > 0) throw new Error('the database is not empty; restore into an empty (or missing) database');
}

function run(cmd: string, args: string[]): void {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.error) throw new Error(`${cmd}: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`${cmd} exited with ${r.status}: ${r.stderr.trim()}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [command, dir] = process.argv.slice(2);
  const main = async () => {
    if ((command !== 'backup' && command !== 'restore') || !dir) throw new Error('usage: scripts/backup.ts backup|restore <dir>');
    const config = loadConfig();
    if (!config.DATABASE_URL || !config.NATS_URL) throw new Error('DATABASE_URL and NATS_URL are required (distributed mode)');
    const settings: BackupSettings = {
      databaseUrl: config.DATABASE_URL,
      natsUrl: config.NATS_URL,
      natsAuth: {
        credsFile: config.NATS_CREDS,
        nkeySeed: config.NATS_NKEY_SEED,
        tls: { caFile: config.NATS_TLS_CA, certFile: config.NATS_TLS_CERT, keyFile: config.NATS_TLS_KEY },
      },
    };
    if (command === 'backup') await backup(dir, settings);
    else await restore(dir, settings);
  };
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(`backup: ${err instanceof Error ? err.message : String(err)}`);
      process.exit(1);
    },
  );
}
