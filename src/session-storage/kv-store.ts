import { DEFAULT_KV_LIST_LIMIT, type KvEntry, type KvListOptions, type SessionKv } from '../capabilities/index.js';
import { InvalidRequestError, QuotaExceededError } from '../errors.js';
import { isStorableText } from '../storable-text.js';
import { UNCAPPED_ORG_STORAGE, type OrgStorageCap } from './org-storage.js';
import { inTransaction, iso, lockKey, num, type StorageDb } from './sql.js';

/** Entries per session (config SESSION_KV_MAX_ENTRIES). */
export const DEFAULT_KV_MAX_ENTRIES = 10_000;
/** Key + value bytes per session (config SESSION_KV_MAX_BYTES). */
export const DEFAULT_KV_MAX_BYTES = 32 * 1024 * 1024;

export interface KvQuota {
  maxEntries: number;
  maxBytes: number;
}

interface Row {
  key: string;
  value?: string;
  created_at: unknown;
  updated_at: unknown;
}

/** Escapes `%`, `_` and `\` for a LIKE prefix match. */
function likePrefix(prefix: string): string {
  return prefix.replace(/[\\%_]/g, '\\$&') + '%';
}

/**
 * One session's key/value entries on the `session_kv` table (the `SessionKv` port). Writes are
 * serialised per session (an advisory lock) so the entry and byte quotas hold under parallel
 * tool calls: the check and the write see the same totals.
 */
export function createSessionKv(
  db: StorageDb,
  { sessionId, orgId, quota, orgCap = UNCAPPED_ORG_STORAGE }: { sessionId: string; orgId: string; quota: KvQuota; orgCap?: OrgStorageCap },
): SessionKv {
  const toEntry = (r: Row): KvEntry => ({
    key: r.key,
    ...(r.value !== undefined ? { value: r.value } : {}),
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  });
  return {
    async get(key) {
      const [row] = await db.sql<{ value: string }>('select value from session_kv where session_id = ? and key = ?', [sessionId, key]);
      return row ? row.value : null;
    },
    async set(key, value) {
      // PostgreSQL text refuses NUL: a clear 4xx (a tool error in a turn), never a driver error.
      if (!isStorableText(key) || !isStorableText(value))
        throw new InvalidRequestError('Key/value entries must be text without NUL characters or unpaired surrogates');
      await inTransaction(db, async (q) => {
        await lockKey(q, `session_kv:${sessionId}`);
        const [others] = await q<{ n: unknown; bytes: unknown; replaced: unknown }>(
          `select count(*) filter (where key <> ?) as n,
             coalesce(sum(octet_length(key) + octet_length(value)) filter (where key <> ?), 0) as bytes,
             coalesce(sum(octet_length(key) + octet_length(value)) filter (where key = ?), 0) as replaced
           from session_kv where session_id = ?`,
          [key, key, key, sessionId],
        );
        const entries = num(others?.n) + 1;
        const entryBytes = Buffer.byteLength(key) + Buffer.byteLength(value);
        const bytes = num(others?.bytes) + entryBytes;
        if (entries > quota.maxEntries)
          throw new QuotaExceededError('count', `Key/value quota reached: a session holds at most ${quota.maxEntries} entries`);
        if (bytes > quota.maxBytes)
          throw new QuotaExceededError(
            'bytes',
            `Key/value quota reached: a session holds at most ${quota.maxBytes} bytes of keys and values`,
          );
        await orgCap.check(q, orgId, entryBytes - num(others?.replaced));
        await q(
          `insert into session_kv (session_id, key, value, created_at, updated_at) values (?, ?, ?, now(), now())
           on conflict (session_id, key) do update set value = excluded.value, updated_at = now()`,
          [sessionId, key, value],
        );
      });
    },
    async delete(key) {
      return (await db.sql('delete from session_kv where session_id = ? and key = ? returning key', [sessionId, key])).length > 0;
    },
    async list({ prefix, limit = DEFAULT_KV_LIST_LIMIT, offset = 0, include_values = false }: KvListOptions = {}) {
      const where = prefix ? `session_id = ? and key like ? escape '\\'` : 'session_id = ?';
      const params = prefix ? [sessionId, likePrefix(prefix)] : [sessionId];
      const columns = include_values ? 'key, value, created_at, updated_at' : 'key, created_at, updated_at';
      const [rows, [count]] = await Promise.all([
        db.sql<Row>(`select ${columns} from session_kv where ${where} order by key limit ? offset ?`, [...params, limit, offset]),
        db.sql<{ n: unknown }>(`select count(*) as n from session_kv where ${where}`, params),
      ]);
      return { entries: rows.map(toEntry), total: num(count?.n) };
    },
  };
}
