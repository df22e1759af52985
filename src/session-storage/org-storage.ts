import { PayloadTooLargeError } from '../errors.js';
import { lockKey, num, type Query } from './sql.js';

/**
 * Everything an organisation's sessions store, in bytes: file contents, key/value keys and values,
 * SQL database files and images (secrets and schedules are small and capped by count). Reached
 * through the sessions' organisation index, then each table's session index.
 */
const ORG_STORED_BYTES = `with s as (select id from sessions where organization_id = ?)
  select (select coalesce(sum(size_bytes), 0) from session_files where session_id in (select id from s))
       + (select coalesce(sum(octet_length(key) + octet_length(value)), 0) from session_kv where session_id in (select id from s))
       + (select coalesce(sum(size_bytes), 0) from session_sql_databases where session_id in (select id from s))
       + (select coalesce(sum(size_bytes), 0) from images where session_id in (select id from s)) as used`;

/**
 * The operator's cap on an organisation's stored bytes (ORG_MAX_STORAGE_BYTES; issue 30 item 6):
 * per-session quotas bound one session, this bounds the tenant however many sessions it makes.
 * `check` runs in the write's transaction, before the write: a write that grows the total takes
 * the organisation's lock (held to commit, after the session's own lock, so the order never
 * inverts) and counts what is committed, so parallel writes, on any instance, cannot pass the
 * cap together. A write that shrinks or keeps the size passes without a look.
 */
export function createOrgStorageCap(maxBytes: number) {
  return {
    maxBytes,
    /** Throws PayloadTooLargeError (413) when `growth` more bytes would take the organisation past its cap. */
    async check(q: Query, orgId: string, growth: number): Promise<void> {
      if (growth <= 0 || !Number.isFinite(maxBytes)) return;
      await lockKey(q, `org-storage:${orgId}`);
      const [row] = await q<{ used: unknown }>(ORG_STORED_BYTES, [orgId]);
      const used = num(row?.used);
      if (used + growth > maxBytes)
        throw new PayloadTooLargeError(
          `Organisation storage limit reached: ${used} of ${maxBytes} bytes used by its sessions, ${growth} more requested`,
        );
    },
  };
}

export type OrgStorageCap = ReturnType<typeof createOrgStorageCap>;

/** No organisation cap (stores built alone, e.g. in tests). */
export const UNCAPPED_ORG_STORAGE: OrgStorageCap = createOrgStorageCap(Number.POSITIVE_INFINITY);
