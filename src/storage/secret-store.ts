import type { SecretInfo, SessionSecrets } from '../capabilities/index.js';
import { decryptSecret, encryptSecret } from '../crypto/index.js';
import { newId } from '../ids.js';
import type { KeyringSource } from './keyring-source.js';
import { iso, type StorageDb } from './sql.js';

/** The AAD purpose of session secret values (also used by key rotation). */
export const SESSION_SECRET_PURPOSE = 'session_secret.value';

export interface SessionSecretsScope {
  sessionId: string;
  orgId: string;
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
 * carry names and timestamps only; only `get` (a tool reading a secret) decrypts.
 */
export function createSessionSecrets(db: StorageDb, keyring: KeyringSource, { sessionId, orgId }: SessionSecretsScope): SessionSecrets & {
  setMany(values: Record<string, string>): Promise<void>;
} {
  const aad = (rowId: string) => ({ org_id: orgId, row_id: rowId, purpose: SESSION_SECRET_PURPOSE });

  async function set(name: string, value: string): Promise<void> {
    // A fresh row id per write keeps id and ciphertext consistent even when two writers race.
    const id = newId();
    await db.sql(
      `insert into session_secrets (id, session_id, organization_id, name, ciphertext, created_at, updated_at) values (?, ?, ?, ?, ?, now(), now())
       on conflict (session_id, name) do update set id = excluded.id, ciphertext = excluded.ciphertext, updated_at = now()`,
      [id, sessionId, orgId, name, encryptSecret(await keyring(), value, aad(id))],
    );
  }

  return {
    async get(name) {
      const [row] = await db.sql<Row>('select id, ciphertext from session_secrets where session_id = ? and name = ?', [sessionId, name]);
      return row ? decryptSecret(await keyring(), row.ciphertext, aad(row.id)) : null;
    },
    set,
    async setMany(values) {
      for (const [name, value] of Object.entries(values)) await set(name, value);
    },
    async delete(name) {
      return (await db.sql('delete from session_secrets where session_id = ? and name = ? returning id', [sessionId, name])).length > 0;
    },
    async list(): Promise<SecretInfo[]> {
      const rows = await db.sql<Row>('select name, created_at, updated_at from session_secrets where session_id = ? order by name', [sessionId]);
      return rows.map((r) => ({ name: r.name, created_at: iso(r.created_at), updated_at: iso(r.updated_at) }));
    },
  };
}
