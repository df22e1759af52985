import {
  createSqlSandbox,
  type SessionFs,
  type SessionKv,
  type SessionSchedules,
  type SecretWrite,
  type SessionSecrets,
  type SessionSql,
  type SqlSandbox,
} from '../capabilities/index.js';
import type { Logger } from '../log.js';
import { createGrepPool, type GrepPool } from '../offthread/index.js';
import { CONNECTION_HOSTS, connectionSecretName, createConnectionStore, DEFAULT_MAX_CONNECTIONS } from './connection-store.js';
import { createSessionFiles, DEFAULT_SESSION_FS_QUOTA_BYTES, sessionFsPort, type SessionFiles } from './file-store.js';
import { createImageStore, DEFAULT_MAX_IMAGE_BYTES, DEFAULT_SESSION_IMAGE_QUOTA_BYTES, DEFAULT_SESSION_MAX_IMAGES } from './image-store.js';
import { keyringSource, type KeyringInput } from './keyring-source.js';
import { createOrgStorageCap } from './org-storage.js';
import { createSessionKv, DEFAULT_KV_MAX_BYTES, DEFAULT_KV_MAX_ENTRIES } from './kv-store.js';
import { createScheduleQueue } from './schedule-queue.js';
import { createSessionSchedules, DEFAULT_MAX_SCHEDULES } from './schedule-store.js';
import { createSessionAccess } from './session-access.js';
import { createSessionSecrets, DEFAULT_MAX_SECRETS } from './secret-store.js';
import { createSessionSql, DEFAULT_MAX_SQL_DATABASE_BYTES, DEFAULT_MAX_SQL_DATABASES } from './sql-store.js';
import type { StorageDb } from './sql.js';
import { createImageSource, createToolStorageFactory } from './tool-context.js';

export interface StorageDeps {
  store: StorageDb;
  /** The envelope keyring, or a loader called on first use of a secret (then cached). */
  keyring: KeyringInput;
  log: Logger;
}

export interface StorageOptions {
  /** Total file bytes per session (config SESSION_FS_QUOTA_BYTES; default 100 MiB). */
  fsQuotaBytes: number;
  /** Largest image upload in bytes (default 10 MiB). */
  maxImageBytes: number;
  /** Images per session (SESSION_MAX_IMAGES) and their total bytes (SESSION_IMAGE_QUOTA_BYTES). */
  maxImagesPerSession: number;
  imageQuotaBytes: number;
  /** Key/value entries per session (SESSION_KV_MAX_ENTRIES) and their key + value bytes (SESSION_KV_MAX_BYTES). */
  kvMaxEntries: number;
  kvMaxBytes: number;
  /** Secrets per session (SESSION_MAX_SECRETS). */
  maxSecrets: number;
  /** Schedule rows per session in any status (SESSION_MAX_SCHEDULES). */
  maxSchedules: number;
  /** Connections per user (USER_MAX_CONNECTIONS). */
  maxConnections: number;
  /** Where SQL runs (worker threads with a deadline); default: a pool with default limits. */
  sqlSandbox: SqlSandbox;
  /** Where grep patterns compile and match (worker threads with a deadline); default: a pool with default limits. */
  grepPool: GrepPool;
  /** Largest SQL database file (config SQL_DATABASE_MAX_BYTES; default 50 MiB). */
  maxSqlDatabaseBytes: number;
  /** SQL databases per session (config SQL_DATABASES_PER_SESSION; default 20). */
  maxSqlDatabases: number;
  /** Bytes all sessions of one organisation store together (config ORG_MAX_STORAGE_BYTES; default: no cap). */
  orgMaxStorageBytes: number;
}

/** Everything one session stores, scoped to that session. */
export interface SessionStorage {
  files: SessionFiles;
  fs: SessionFs;
  kv: SessionKv;
  secrets: SessionSecrets & { setMany(values: Record<string, SecretWrite>): Promise<void> };
  sql: SessionSql;
  schedules: SessionSchedules;
}

/**
 * The capability storage of the service: per-session stores (files, kv, secrets, SQL,
 * schedules), images, user connections, session lookups for REST, and the schedule queue.
 */
export function createStorage({ store, keyring: keyringInput, log }: StorageDeps, opts: Partial<StorageOptions> = {}) {
  const {
    fsQuotaBytes = DEFAULT_SESSION_FS_QUOTA_BYTES,
    maxImageBytes = DEFAULT_MAX_IMAGE_BYTES,
    maxImagesPerSession = DEFAULT_SESSION_MAX_IMAGES,
    imageQuotaBytes = DEFAULT_SESSION_IMAGE_QUOTA_BYTES,
    kvMaxEntries = DEFAULT_KV_MAX_ENTRIES,
    kvMaxBytes = DEFAULT_KV_MAX_BYTES,
    maxSecrets = DEFAULT_MAX_SECRETS,
    maxSchedules = DEFAULT_MAX_SCHEDULES,
    maxConnections = DEFAULT_MAX_CONNECTIONS,
    maxSqlDatabaseBytes = DEFAULT_MAX_SQL_DATABASE_BYTES,
    maxSqlDatabases = DEFAULT_MAX_SQL_DATABASES,
    orgMaxStorageBytes = Number.POSITIVE_INFINITY,
  } = opts;
  const orgCap = createOrgStorageCap(orgMaxStorageBytes);
  // Idle workers do not hold the process open, so a default pool needs no closing.
  const sqlSandbox = opts.sqlSandbox ?? createSqlSandbox();
  const grepPool = opts.grepPool ?? createGrepPool();
  const keyring = keyringSource(keyringInput);
  const connections = createConnectionStore(store, keyring, { maxPerUser: maxConnections });
  const secretsOf = (scope: { sessionId: string; orgId: string }) => createSessionSecrets(store, keyring, { ...scope, maxSecrets });

  function forSession(session: { id: string; organization_id: string }): SessionStorage {
    const scope = { sessionId: session.id, orgId: session.organization_id };
    const files = createSessionFiles(store, { ...scope, quotaBytes: fsQuotaBytes, grepPool, orgCap });
    return {
      files,
      fs: sessionFsPort(files),
      kv: createSessionKv(store, { ...scope, quota: { maxEntries: kvMaxEntries, maxBytes: kvMaxBytes }, orgCap }),
      secrets: secretsOf(scope),
      sql: createSessionSql(store, {
        ...scope,
        orgCap,
        sandbox: sqlSandbox,
        maxDatabaseBytes: maxSqlDatabaseBytes,
        maxDatabases: maxSqlDatabases,
      }),
      schedules: createSessionSchedules(store, { ...scope, maxSchedules }),
    };
  }

  /**
   * Copies the user's connections into a new session as secrets `connection:<provider>`
   * (spec 2.3). Returns how many were injected; values are never logged.
   */
  async function injectConnections(session: { id: string; organization_id: string; user_id: string }): Promise<number> {
    const keys = await connections.keysOf({ orgId: session.organization_id, userId: session.user_id });
    if (keys.length === 0) return 0;
    // Never refused: the session row exists already, and connections have their own cap (USER_MAX_CONNECTIONS).
    const secrets = createSessionSecrets(store, keyring, {
      sessionId: session.id,
      orgId: session.organization_id,
      maxSecrets: Number.POSITIVE_INFINITY,
    });
    await secrets.setMany(
      Object.fromEntries(
        keys.map((k) => [connectionSecretName(k.provider), { value: k.apiKey, allowed_hosts: CONNECTION_HOSTS[k.provider] ?? [] }]),
      ),
    );
    log.debug({ sessionId: session.id, providers: keys.map((k) => k.provider) }, 'user connections injected as session secrets');
    return keys.length;
  }

  /**
   * Writes a new session's starter files (`initial_files`, checked by the caller against the
   * quota and the per-file limit); read-only ones are marked so.
   */
  async function writeStarterFiles(
    session: { id: string; organization_id: string },
    files: readonly { path: string; content: Uint8Array; readonly: boolean }[],
  ): Promise<void> {
    const sessionFiles = createSessionFiles(store, {
      sessionId: session.id,
      orgId: session.organization_id,
      quotaBytes: fsQuotaBytes,
      grepPool,
    });
    for (const file of files) await sessionFiles.write(file.path, file.content, { readonly: file.readonly, force: true });
  }

  const images = createImageStore(store, {
    maxBytes: maxImageBytes,
    maxPerSession: maxImagesPerSession,
    quotaBytesPerSession: imageQuotaBytes,
    orgCap,
  });
  return {
    forSession,
    injectConnections,
    writeStarterFiles,
    connections,
    images,
    access: createSessionAccess(store),
    scheduleQueue: createScheduleQueue(store),
    fsQuotaBytes,
    /** Where SQL runs; `stats()` shows its workers and queue. */
    sqlSandbox,
    /** Where grep runs; `stats()` shows its workers and queue. */
    grepPool,
    /** The turn engine's `toolStorage` port. */
    toolStorage: createToolStorageFactory({ forSession }),
    /** The turn engine's `images` port. */
    imageSource: createImageSource(images),
  };
}

export type Storage = ReturnType<typeof createStorage>;
