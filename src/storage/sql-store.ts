import { openDatabase, type SessionSql, type SessionSqlDatabase, type SqliteDatabase, type SqlDatabaseInfo } from '../capabilities/index.js';
import { NotFoundError, PayloadTooLargeError } from '../errors.js';
import { bytes, inTransaction, iso, num, type StorageDb } from './sql.js';

/** Largest database file a session may keep, per database: 50 MiB. */
export const DEFAULT_MAX_SQL_DATABASE_BYTES = 50 * 1024 * 1024;

export interface SessionSqlScope {
  sessionId: string;
  maxDatabaseBytes?: number;
}

/**
 * One session's SQLite databases on `session_sql_databases`: each call loads the database file's
 * bytes for (session, name) into sql.js, runs, and `exec` saves the new bytes. Writers of one
 * database are serialised by a row lock (`select … for update`), so no update is lost; a
 * session can reach only rows with its own id, which is what isolates sessions.
 */
export function createSessionSql(db: StorageDb, { sessionId, maxDatabaseBytes = DEFAULT_MAX_SQL_DATABASE_BYTES }: SessionSqlScope): SessionSql {
  async function load(name: string): Promise<Buffer> {
    const [row] = await db.sql<{ content: unknown }>('select content from session_sql_databases where session_id = ? and name = ?', [sessionId, name]);
    if (!row) throw new NotFoundError(`No such database: ${name}`);
    return bytes(row.content);
  }

  async function withEngine<T>(content: Uint8Array, fn: (engine: SqliteDatabase) => T): Promise<T> {
    const engine = await openDatabase(content.length > 0 ? content : null);
    try {
      return fn(engine);
    } finally {
      engine.close();
    }
  }

  function handle(name: string): SessionSqlDatabase {
    return {
      exec: (sql, params) =>
        inTransaction(db, async (q) => {
          const [row] = await q<{ content: unknown }>('select content from session_sql_databases where session_id = ? and name = ? for update', [sessionId, name]);
          if (!row) throw new NotFoundError(`No such database: ${name}`);
          const { result, next } = await withEngine(bytes(row.content), (engine) => ({ result: engine.exec(sql, params), next: engine.export() }));
          if (next.length > maxDatabaseBytes) throw new PayloadTooLargeError(`Database ${name} would be ${next.length} bytes; the maximum is ${maxDatabaseBytes}`);
          await q('update session_sql_databases set content = ?, size_bytes = ?, version = version + 1, updated_at = now() where session_id = ? and name = ?',
            [Buffer.from(next.buffer, next.byteOffset, next.byteLength), next.length, sessionId, name]);
          return result;
        }),
      query: async (sql, params, opts) => withEngine(await load(name), (engine) => engine.query(sql, params, opts)),
      schema: async () => withEngine(await load(name), (engine) => engine.schema()),
      close: async () => undefined,
    };
  }

  return {
    async list(): Promise<SqlDatabaseInfo[]> {
      const rows = await db.sql<{ name: string; size_bytes: unknown; created_at: unknown; updated_at: unknown }>(
        'select name, size_bytes, created_at, updated_at from session_sql_databases where session_id = ? order by name', [sessionId]);
      return rows.map((r) => ({ name: r.name, size_bytes: num(r.size_bytes), created_at: iso(r.created_at), updated_at: iso(r.updated_at) }));
    },
    async open(name, { create = false } = {}) {
      const [row] = await db.sql('select 1 from session_sql_databases where session_id = ? and name = ?', [sessionId, name]);
      if (!row) {
        if (!create) throw new NotFoundError(`No such database: ${name}`);
        const empty = await withEngine(new Uint8Array(0), (engine) => engine.export());
        await db.sql(
          `insert into session_sql_databases (session_id, name, content, size_bytes, version, created_at, updated_at)
           values (?, ?, ?, ?, 1, now(), now()) on conflict (session_id, name) do nothing`,
          [sessionId, name, Buffer.from(empty), empty.length]);
      }
      return handle(name);
    },
  };
}
