import type { SecretInfo, SecretWrite, SessionSecrets } from '../capabilities/index.js';
import { decryptSecret, encryptSecret } from '../crypto/index.js';
import { preparedSql } from '../db/index.js';
import { QuotaExceededError } from '../errors.js';
import { newId } from '../ids.js';
import type { KeyringSource } from './keyring-source.js';
import { inTransaction, iso, lockKey, type Query, type StorageDb } from './sql.js';

/** The act step's redaction table, read every step (prepared-sql.ts). */
const ALL_VALUES = preparedSql('session-secrets.all-values', 'select id, name, ciphertext from session_secrets where session_id = ?');

/** Secrets per session (config SESSION_MAX_SECRETS). */
export const DEFAULT_MAX_SECRETS = 100;

/** The AAD purpose of session secret values (also used by key rotation). */
export const SESSION_SECRET_PURPOSE = 'session_secret.value';

export interface SessionSecretsScope {
  sessionId: string;
  orgId: string;
  /** Most secrets the session may hold. */
  maxSecrets: number;
}

interface Row {
  id: string;
  name: string;
  ciphertext: string;
  allowed_hosts: unknown;
  created_at: unknown;
  updated_at: unknown;
}

/**
 * One session's secrets on `session_secrets`: each value is an envelope bound to
 * (org, row id, purpose), so a ciphertext moved to another row or org does not open. Lists
 * carry names and timestamps only; `get` (a secret used by reference) and `allValues`
 * (redaction of tool results) decrypt. Writes lock the session's secrets so the count quota holds.
 */
export function createSessionSecrets(
  db: StorageDb,
  keyring: KeyringSource,
  { sessionId, orgId, maxSecrets }: SessionSecretsScope,
): SessionSecrets & {
  setMany(values: Record<string, SecretWrite>): Promise<void>;
} {
  const aad = (rowId: string) => ({ org_id: orgId, row_id: rowId, purpose: SESSION_SECRET_PURPOSE });

  /** Writes `values` in one transaction, or nothing when the session would hold more than `maxSecrets`. */
  async function write(values: Record<string, SecretWrite>): Promise<void> {
    const ring = await keyring();
    const names = Object.keys(values);
    await inTransaction(db, async (q: Query) => {
      await lockKey(q, `session_secrets:${sessionId}`);
      const existing = new Set(
        (await q<{ name: string }>('select name from session_secrets where session_id = ?', [sessionId])).map((r) => r.name),
      );
      const total = existing.size + names.filter((n) => !existing.has(n)).length;
      if (total > maxSecrets) throw new QuotaExceededError('count', `Secret quota reached: a session holds at most ${maxSecrets} secrets`);
      for (const name of names) {
        // A fresh row id per write keeps id and ciphertext consistent even when two writers race.
        const id = newId();
        const { value, allowed_hosts } = values[name]!;
        // Null hosts: a new secret gets none, a replaced one keeps its own.
        const hosts = allowed_hosts === undefined ? null : JSON.stringify(allowed_hosts);
        await q(
          `insert into session_secrets (id, session_id, organization_id, name, ciphertext, allowed_hosts, created_at, updated_at)
           values (?, ?, ?, ?, ?, coalesce(cast(? as jsonb), '[]'::jsonb), now(), now())
           on conflict (session_id, name) do update set id = excluded.id, ciphertext = excluded.ciphertext,
             allowed_hosts = coalesce(cast(? as jsonb), session_secrets.allowed_hosts), updated_at = now()`,
          [id, sessionId, orgId, name, encryptSecret(ring, value, aad(id)), hosts, hosts],
        );
      }
    });
  }

  return {
    async get(name) {
      const [row] = await db.sql<Row>('select id, ciphertext, allowed_hosts from session_secrets where session_id = ? and name = ?', [
        sessionId,
        name,
      ]);
      if (!row) return null;
      return { value: decryptSecret(await keyring(), row.ciphertext, aad(row.id)), allowed_hosts: hostList(row.allowed_hosts) };
    },
    set: (name, secret) => write({ [name]: secret }),
    setMany: write,
    async delete(name) {
      return (await db.sql('delete from session_secrets where session_id = ? and name = ? returning id', [sessionId, name])).length > 0;
    },
    async list(): Promise<SecretInfo[]> {
      const rows = await db.sql<Row>(
        'select name, allowed_hosts, created_at, updated_at from session_secrets where session_id = ? order by name',
        [sessionId],
      );
      return rows.map((r) => ({
        name: r.name,
        allowed_hosts: hostList(r.allowed_hosts),
        created_at: iso(r.created_at),
        updated_at: iso(r.updated_at),
      }));
    },
    async allValues() {
      const rows = await db.sql<Row>(ALL_VALUES, [sessionId]);
      if (rows.length === 0) return [];
      const ring = await keyring();
      return rows.map((r) => ({ name: r.name, value: decryptSecret(ring, r.ciphertext, aad(r.id)) }));
    },
  };
}

/** A jsonb column as read: parsed by the pg driver, text from some PGlite paths. */
function hostList(column: unknown): string[] {
  const v = typeof column === 'string' ? JSON.parse(column) : column;
  return Array.isArray(v) ? v.filter((h): h is string => typeof h === 'string') : [];
}
