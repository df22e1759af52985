import type { SecretInfo, SessionSecrets } from '../capabilities/index.js';
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
  setMany(values: Record<string, string>): Promise<void>;
} {
  const aad = (rowId: string) => ({ org_id: orgId, row_id: rowId, purpose: SESSION_SECRET_PURPOSE });

  /** Writes `values` in one transaction, or nothing when the session would hold more than `maxSecrets`. */
  async function write(values: Record<string, string>): Promise<void> {
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
        await q(
          `insert into session_secrets (id, session_id, organization_id, name, ciphertext, created_at, updated_at) values (?, ?, ?, ?, ?, now(), now())
           on conflict (session_id, name) do update set id = excluded.id, ciphertext = excluded.ciphertext, updated_at = now()`,
          [id, sessionId, orgId, name, encryptSecret(ring, values[name]!, aad(id))],
        );
      }
    });
  }

  return {
    async get(name) {
      const [row] = await db.sql<Row>('select id, ciphertext from session_secrets where session_id = ? and name = ?', [sessionId, name]);
      return row ? decryptSecret(await keyring(), row.ciphertext, aad(row.id)) : null;
    },
    set: (name, value) => write({ [name]: value }),
    setMany: write,
    async delete(name) {
      return (await db.sql('delete from session_secrets where session_id = ? and name = ? returning id', [sessionId, name])).length > 0;
    },
    async list(): Promise<SecretInfo[]> {
      const rows = await db.sql<Row>('select name, created_at, updated_at from session_secrets where session_id = ? order by name', [
        sessionId,
      ]);
      return rows.map((r) => ({ name: r.name, created_at: iso(r.created_at), updated_at: iso(r.updated_at) }));
    },
    async allValues() {
      const rows = await db.sql<Row>(ALL_VALUES, [sessionId]);
      if (rows.length === 0) return [];
      const ring = await keyring();
      return rows.map((r) => ({ name: r.name, value: decryptSecret(ring, r.ciphertext, aad(r.id)) }));
    },
  };
}
