import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Logger } from '../log.js';
import type { Store } from '../db/index.js';
import { ApiKey, Organization, User } from '../db/index.js';
import { displayPrefix, generateApiKey, hashApiKey } from './api-key.js';

export interface BootstrapOptions {
  store: Store;
  log: Logger;
  /** Used as given when set (>= 20 characters); otherwise a random key is generated. */
  adminApiKey?: string;
  /** Embedded mode: the key is also written to `<dataDir>/admin-api-key` with mode 0600. */
  keyFileDir?: string;
  /** Printed beside a generated key: where the web console signs in with it. */
  consoleUrl?: string;
}

/**
 * On an empty database, creates the first organisation, its admin (the instance operator) and
 * an admin API key. Instances starting at once serialise on an advisory lock.
 */
export async function ensureBootstrapAdmin({
  store,
  log,
  adminApiKey,
  keyFileDir,
  consoleUrl,
}: BootstrapOptions): Promise<{ created: boolean; apiKey?: string }> {
  const em = store.em();
  return em.transactional(async (tx) => {
    await tx.getConnection().execute('select pg_advisory_xact_lock(424242)', [], 'all', tx.getTransactionContext());
    if ((await tx.count(User, {})) > 0) return { created: false };
    // Entities declare no relations, so the ORM cannot order inserts by foreign key: flush parents first.
    const org = tx.create(Organization, { name: 'Default' });
    await tx.flush();
    const user = tx.create(User, {
      organization_id: org.id,
      email: 'admin@localhost',
      name: 'Admin',
      role: 'admin',
      operator: true,
      password_hash: null,
    });
    await tx.flush();
    const key = adminApiKey ?? generateApiKey().key;
    tx.create(ApiKey, {
      organization_id: org.id,
      user_id: user.id,
      name: 'bootstrap admin',
      prefix: displayPrefix(key),
      key_hash: hashApiKey(key),
    });
    await tx.flush();
    if (keyFileDir) {
      const dir = resolve(keyFileDir);
      mkdirSync(dir, { recursive: true });
      const file = join(dir, 'admin-api-key');
      writeFileSync(file, key + '\n', { mode: 0o600 });
      chmodSync(file, 0o600);
      log.info({ file }, 'bootstrap admin API key written');
    }
    if (!adminApiKey) {
      // Printed once, on purpose, outside the redacting logger: this is how the operator gets in.
      const consoleLine = consoleUrl ? `Console: ${consoleUrl} (sign in with this key)\n` : '';
      process.stdout.write(`\nAdmin API key (shown once): ${key}\n${consoleLine}\n`);
    }
    log.info({ orgId: org.id, userId: user.id }, 'bootstrap organisation and admin created');
    return { created: true, apiKey: key };
  });
}
