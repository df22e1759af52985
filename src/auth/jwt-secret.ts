import { randomBytes } from 'node:crypto';
import { DecryptionError, decryptSecret, encryptSecret, parseEnvelope, type Keyring, type SecretAad } from '../crypto/index.js';
import type { Store } from '../db/index.js';
import { AuthSecret } from '../db/entities/index.js';

/** Advisory lock id under which the first instance generates the shared JWT secret. */
const JWT_SECRET_LOCK_ID = 424243;
const JWT_SECRET_NAME = 'jwt_hs256';
/** Length of a generated secret in bytes (HS256 wants at least 32). */
const GENERATED_SECRET_BYTES = 64;
/** The AAD purpose of `auth_secrets.value` (also used by key rotation). */
export const AUTH_SECRET_PURPOSE = 'auth_secret.value';
/** Instance-wide secrets belong to no organisation; the envelope still binds them to one. */
export const AUTH_SECRET_ORG = 'instance';

export interface JwtSecretOptions {
  store: Store;
  /** The envelope keyring the stored secret is sealed with (the one of every other secret). */
  keyring: Keyring;
  /** `JWT_SECRET` from the config; when set it is used as is and nothing is stored. */
  configured?: string;
}

const aad = (name: string): SecretAad => ({ org_id: AUTH_SECRET_ORG, row_id: name, purpose: AUTH_SECRET_PURPOSE });

function isEnvelope(value: string): boolean {
  try {
    parseEnvelope(value);
    return true;
  } catch {
    return false;
  }
}

/**
 * Opens the stored key. A key that does not open means this instance has another secrets key
 * than the one that sealed it: refuse to start rather than sign with a key of our own.
 */
function open(keyring: Keyring, sealed: string): string {
  try {
    return decryptSecret(keyring, sealed, aad(JWT_SECRET_NAME));
  } catch (err) {
    if (!(err instanceof DecryptionError)) throw err;
    throw new Error(
      `the stored JWT signing key cannot be opened (${err.reason}): set SECRETS_ENCRYPTION_KEY (or SECRETS_ENCRYPTION_KEY_PREVIOUS) to the key that sealed it, or set JWT_SECRET`,
      { cause: err },
    );
  }
}

/**
 * The HS256 signing key. Without `JWT_SECRET`, a random secret is generated once, under an
 * advisory lock, and stored in the database sealed with the secrets keyring, so every instance
 * sharing it signs and verifies alike and a database dump alone cannot mint tokens. A key
 * stored in plain text by an earlier version is sealed here, under the same lock, on start.
 */
export async function loadJwtSecret({
  store,
  keyring,
  configured,
}: JwtSecretOptions): Promise<{ key: Uint8Array; source: 'config' | 'database'; sealedNow: boolean }> {
  if (configured) return { key: new TextEncoder().encode(configured), source: 'config', sealedNow: false };
  const { value, sealedNow } = await store.em().transactional(async (tx) => {
    await tx.getConnection().execute('select pg_advisory_xact_lock(?)', [JWT_SECRET_LOCK_ID], 'all', tx.getTransactionContext());
    const row = await tx.findOne(AuthSecret, { name: JWT_SECRET_NAME });
    if (row && isEnvelope(row.value)) return { value: open(keyring, row.value), sealedNow: false };
    const plain = row ? row.value : randomBytes(GENERATED_SECRET_BYTES).toString('base64url');
    const sealed = encryptSecret(keyring, plain, aad(JWT_SECRET_NAME));
    if (row) row.value = sealed;
    else tx.create(AuthSecret, { name: JWT_SECRET_NAME, value: sealed });
    await tx.flush();
    return { value: plain, sealedNow: row !== null };
  });
  return { key: Buffer.from(value, 'base64url'), source: 'database', sealedNow };
}
