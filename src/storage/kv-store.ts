import type { KvEntry, SessionKv } from '../capabilities/index.js';
import { iso, type StorageDb } from './sql.js';

interface Row {
  key: string;
  value: string;
  created_at: unknown;
  updated_at: unknown;
}

/** Escapes `%`, `_` and `\` for a LIKE prefix match. */
function likePrefix(prefix: string): string {
  return prefix.replace(/[\\%_]/g, '\\$&') + '%';
}

/** One session's key/value entries on the `session_kv` table (the `SessionKv` port). */
export function createSessionKv(db: StorageDb, { sessionId }: { sessionId: string }): SessionKv {
  const toEntry = (r: Row): KvEntry => ({ key: r.key, value: r.value, created_at: iso(r.created_at), updated_at: iso(r.updated_at) });
  return {
    async get(key) {
      const [row] = await db.sql<{ value: string }>('select value from session_kv where session_id = ? and key = ?', [sessionId, key]);
      return row ? row.value : null;
    },
    async set(key, value) {
      await db.sql(
        `insert into session_kv (session_id, key, value, created_at, updated_at) values (?, ?, ?, now(), now())
         on conflict (session_id, key) do update set value = excluded.value, updated_at = now()`,
        [sessionId, key, value],
      );
    },
    async delete(key) {
      return (await db.sql('delete from session_kv where session_id = ? and key = ? returning key', [sessionId, key])).length > 0;
    },
    async list({ prefix } = {}) {
      const rows = prefix
        ? await db.sql<Row>(`select key, value, created_at, updated_at from session_kv where session_id = ? and key like ? escape '\\' order by key`, [sessionId, likePrefix(prefix)])
        : await db.sql<Row>('select key, value, created_at, updated_at from session_kv where session_id = ? order by key', [sessionId]);
      return rows.map(toEntry);
    },
  };
}
