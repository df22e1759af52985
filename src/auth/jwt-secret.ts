import { randomBytes } from 'node:crypto';
import type { Store } from '../store/index.js';
import { AuthSecret } from '../store/entities/index.js';

/** Advisory lock id under which the first instance generates the shared JWT secret. */
const JWT_SECRET_LOCK_ID = 424243;
const JWT_SECRET_NAME = 'jwt_hs256';
/** Length of a generated secret in bytes (HS256 wants at least 32). */
const GENERATED_SECRET_BYTES = 64;

export interface JwtSecretOptions {
  store: Store;
  /** `JWT_SECRET` from the config; when set it is used as is and nothing is stored. */
  configured?: string;
}

/**
 * The HS256 signing key. Without `JWT_SECRET`, a random secret is generated once, under an
 * advisory lock, and stored in the database, so every instance sharing it signs and verifies alike.
 */
export async function loadJwtSecret({ store, configured }: JwtSecretOptions): Promise<{ key: Uint8Array; source: 'config' | 'database' }> {
  if (configured) return { key: new TextEncoder().encode(configured), source: 'config' };
  const value = await store.em().transactional(async (tx) => {
    await tx.getConnection().execute('select pg_advisory_xact_lock(?)', [JWT_SECRET_LOCK_ID], 'all', tx.getTransactionContext());
    const row = await tx.findOne(AuthSecret, { name: JWT_SECRET_NAME });
    if (row) return row.value;
    const created = tx.create(AuthSecret, { name: JWT_SECRET_NAME, value: randomBytes(GENERATED_SECRET_BYTES).toString('base64url') });
    await tx.flush();
    return created.value;
  });
  return { key: Buffer.from(value, 'base64url'), source: 'database' };
}
