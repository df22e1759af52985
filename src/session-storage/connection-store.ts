import { CONNECTION_SECRET_PREFIX } from '../capabilities/index.js';
import { decryptSecret, encryptSecret } from '../crypto/index.js';
import { NotFoundError, QuotaExceededError } from '../errors.js';
import { newId } from '../ids.js';
import type { KeyringSource } from './keyring-source.js';
import { inTransaction, iso, lockKey, num, type StorageDb } from './sql.js';

/** Connections per user (config USER_MAX_CONNECTIONS); each becomes a secret of the user's new sessions. */
export const DEFAULT_MAX_CONNECTIONS = 20;

/** The AAD purpose of connection keys (also used by key rotation). */
export const USER_CONNECTION_PURPOSE = 'user_connection.api_key';
/** Provider ids: lower-case letters, digits, `_`, `.`, `-`; 1 to 64 characters. */
export const PROVIDER_RE = /^[a-z0-9][a-z0-9_.-]{0,63}$/;
/**
 * The hosts a connection's secret may be sent to, for the code hosts we know; another provider's
 * secret goes nowhere until the user binds it (PUT …/storage/secrets with `allowed_hosts`).
 */
export const CONNECTION_HOSTS: Readonly<Record<string, readonly string[]>> = {
  github: ['api.github.com', 'github.com', 'uploads.github.com'],
  gitlab: ['gitlab.com'],
  bitbucket: ['api.bitbucket.org', 'bitbucket.org'],
};
/** The session secret a connection becomes (spec 2.3). */
export const connectionSecretName = (provider: string) => `${CONNECTION_SECRET_PREFIX}${provider}`;

export interface ConnectionRecord {
  provider: string;
  created_at: string;
  updated_at: string;
}

export interface ConnectionOwner {
  orgId: string;
  userId: string;
}

interface Row {
  id: string;
  provider: string;
  ciphertext: string;
  created_at: unknown;
  updated_at: unknown;
  inserted?: boolean;
}

/**
 * Per-user connections to code-hosting accounts on `user_connections`. The key is sealed with
 * envelope encryption bound to (org, row id, purpose) and never returned; only `keysOf`
 * (session creation, which turns them into session secrets) decrypts.
 */
export function createConnectionStore(
  db: StorageDb,
  keyring: KeyringSource,
  { maxPerUser = DEFAULT_MAX_CONNECTIONS }: { maxPerUser?: number } = {},
) {
  const aad = (orgId: string, rowId: string) => ({ org_id: orgId, row_id: rowId, purpose: USER_CONNECTION_PURPOSE });
  const toRecord = (r: Row): ConnectionRecord => ({ provider: r.provider, created_at: iso(r.created_at), updated_at: iso(r.updated_at) });

  return {
    async list({ userId }: ConnectionOwner): Promise<ConnectionRecord[]> {
      const rows = await db.sql<Row>('select provider, created_at, updated_at from user_connections where user_id = ? order by provider', [
        userId,
      ]);
      return rows.map(toRecord);
    },

    async get({ userId }: ConnectionOwner, provider: string): Promise<ConnectionRecord> {
      const [row] = await db.sql<Row>('select provider, created_at, updated_at from user_connections where user_id = ? and provider = ?', [
        userId,
        provider,
      ]);
      if (!row) throw new NotFoundError(`Not found: no connection for provider ${provider}`);
      return toRecord(row);
    },

    /** Creates or replaces the key; `created` tells which. A fresh row id per write keeps id and AAD consistent. */
    async put(
      { orgId, userId }: ConnectionOwner,
      provider: string,
      apiKey: string,
    ): Promise<{ record: ConnectionRecord; created: boolean }> {
      const id = newId();
      const ciphertext = encryptSecret(await keyring(), apiKey, aad(orgId, id));
      const row = await inTransaction(db, async (q) => {
        await lockKey(q, `user_connections:${userId}`);
        const [others] = await q<{ n: unknown }>('select count(*) as n from user_connections where user_id = ? and provider <> ?', [
          userId,
          provider,
        ]);
        if (num(others?.n) + 1 > maxPerUser)
          throw new QuotaExceededError('count', `Connection quota reached: a user holds at most ${maxPerUser} connections`);
        const [stored] = await q<Row>(
          `insert into user_connections (id, organization_id, user_id, provider, ciphertext, created_at, updated_at) values (?, ?, ?, ?, ?, now(), now())
           on conflict (user_id, provider) do update set id = excluded.id, organization_id = excluded.organization_id,
             ciphertext = excluded.ciphertext, updated_at = now()
           returning provider, created_at, updated_at, (xmax = 0) as inserted`,
          [id, orgId, userId, provider, ciphertext],
        );
        return stored;
      });
      return { record: toRecord(row!), created: row!.inserted === true };
    },

    async remove({ userId }: ConnectionOwner, provider: string): Promise<void> {
      const gone = await db.sql('delete from user_connections where user_id = ? and provider = ? returning id', [userId, provider]);
      if (gone.length === 0) throw new NotFoundError(`Not found: no connection for provider ${provider}`);
    },

    /** Every connection of the user with its decrypted key, for injection into a new session. */
    async keysOf({ orgId, userId }: ConnectionOwner): Promise<{ provider: string; apiKey: string }[]> {
      const rows = await db.sql<Row>(
        'select id, provider, ciphertext from user_connections where user_id = ? and organization_id = ? order by provider',
        [userId, orgId],
      );
      if (rows.length === 0) return [];
      const ring = await keyring();
      return rows.map((r) => ({ provider: r.provider, apiKey: decryptSecret(ring, r.ciphertext, aad(orgId, r.id)) }));
    },
  };
}

export type ConnectionStore = ReturnType<typeof createConnectionStore>;
