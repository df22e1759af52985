import type { SessionSql, SessionSqlDatabase, SqlDatabaseInfo, SqlSandbox } from '../capabilities/index.js';
import { ConflictError, NotFoundError, PayloadTooLargeError } from '../errors.js';
import { UNCAPPED_ORG_STORAGE, type OrgStorageCap } from './org-storage.js';
import { bytes, inTransaction, iso, lockKey, num, type StorageDb } from './sql.js';

/** Largest database file a session may keep, per database: 50 MiB (config SQL_DATABASE_MAX_BYTES). */
export const DEFAULT_MAX_SQL_DATABASE_BYTES = 50 * 1024 * 1024;
/** Databases one session may have (config SQL_DATABASES_PER_SESSION). */
export const DEFAULT_MAX_SQL_DATABASES = 20;

export interface SessionSqlScope {
  sessionId: string;
  /** The session's organisation: the sandbox shares its workers fairly between organisations. */
  orgId: string;
  /** The organisation's cap on what all its sessions store (default: none). */
  orgCap?: OrgStorageCap;
  /** Runs the SQL off the event loop, with a deadline and memory caps. */
  sandbox: SqlSandbox;
  maxDatabaseBytes?: number;
  maxDatabases?: number;
}

/**
 * One session's SQLite databases on `session_sql_databases`: each call loads the database file's
 * bytes for (session, name), hands them to the SQL sandbox (a worker thread) and, after `exec`,
 * saves the new bytes. Writers of one database are serialised by a row lock (`select … for
 * update`), so no update is lost; a session can reach only rows with its own id, which is what
 * isolates sessions. A failed, stopped or oversized call saves nothing.
 */
export function createSessionSql(
  db: StorageDb,
  {
    sessionId,
    orgId,
    orgCap = UNCAPPED_ORG_STORAGE,
    sandbox,
    maxDatabaseBytes = DEFAULT_MAX_SQL_DATABASE_BYTES,
    maxDatabases = DEFAULT_MAX_SQL_DATABASES,
  }: SessionSqlScope,
): SessionSql {
  const tenant = { org: orgId, key: sessionId };
  async function load(name: string): Promise<Buffer> {
    const [row] = await db.sql<{ content: unknown }>('select content from session_sql_databases where session_id = ? and name = ?', [
      sessionId,
      name,
    ]);
    if (!row) throw new NotFoundError(`No such database: ${name}`);
    return bytes(row.content);
  }

  function handle(name: string): SessionSqlDatabase {
    return {
      exec: (sql, params) =>
        inTransaction(db, async (q) => {
          const [row] = await q<{ content: unknown; size_bytes: unknown }>(
            'select content, size_bytes from session_sql_databases where session_id = ? and name = ? for update',
            [sessionId, name],
          );
          if (!row) throw new NotFoundError(`No such database: ${name}`);
          const { result, bytes: next } = await sandbox.exec(tenant, bytes(row.content), sql, params, { maxDatabaseBytes });
          if (next.length > maxDatabaseBytes)
            throw new PayloadTooLargeError(`Database ${name} would be ${next.length} bytes; the maximum is ${maxDatabaseBytes}`);
          await orgCap.check(q, orgId, next.length - num(row.size_bytes));
          await q(
            'update session_sql_databases set content = ?, size_bytes = ?, version = version + 1, updated_at = now() where session_id = ? and name = ?',
            [Buffer.from(next.buffer, next.byteOffset, next.byteLength), next.length, sessionId, name],
          );
          return result;
        }),
      query: async (sql, params, opts) => sandbox.query(tenant, await load(name), sql, params, opts),
      schema: async () => sandbox.schema(tenant, await load(name)),
      close: async () => undefined,
    };
  }

  /** Inserts an empty database unless it exists; the per-session count is checked under a lock. */
  async function create(name: string): Promise<void> {
    const empty = await sandbox.create(tenant);
    await inTransaction(db, async (q) => {
      await lockKey(q, `sql-databases:${sessionId}`);
      const [row] = await q<{ n: unknown; present: unknown }>(
        'select count(*) as n, count(*) filter (where name = ?) as present from session_sql_databases where session_id = ?',
        [name, sessionId],
      );
      if (num(row?.present) > 0) return;
      if (num(row?.n) >= maxDatabases) {
        throw new ConflictError(`This session already has ${maxDatabases} SQL databases, the maximum; reuse or drop one`);
      }
      await orgCap.check(q, orgId, empty.length);
      await q(
        `insert into session_sql_databases (session_id, name, content, size_bytes, version, created_at, updated_at)
         values (?, ?, ?, ?, 1, now(), now()) on conflict (session_id, name) do nothing`,
        [sessionId, name, Buffer.from(empty.buffer, empty.byteOffset, empty.byteLength), empty.length],
      );
    });
  }

  return {
    async list(): Promise<SqlDatabaseInfo[]> {
      const rows = await db.sql<{ name: string; size_bytes: unknown; created_at: unknown; updated_at: unknown }>(
        'select name, size_bytes, created_at, updated_at from session_sql_databases where session_id = ? order by name',
        [sessionId],
      );
      return rows.map((r) => ({
        name: r.name,
        size_bytes: num(r.size_bytes),
        created_at: iso(r.created_at),
        updated_at: iso(r.updated_at),
      }));
    },
    async open(name, { create: allowCreate = false } = {}) {
      const [row] = await db.sql('select 1 from session_sql_databases where session_id = ? and name = ?', [sessionId, name]);
      if (!row) {
        if (!allowCreate) throw new NotFoundError(`No such database: ${name}`);
        await create(name);
      }
      return handle(name);
    },
  };
}
