import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { pino } from 'pino';
import { createKeyring } from '../../src/crypto/index.js';
import { newId } from '../../src/ids.js';
import { createStore, type Store } from '../../src/db/index.js';
import { createStorage, type Storage, type StorageOptions } from '../../src/session-storage/index.js';
import { createTestDatabase } from '../helpers/postgres.js';
import { seedEmbeddedDataDir } from '../helpers/pglite-template.js';

export interface StorageFixture {
  store: Store;
  /** The PostgreSQL database's URL (undefined with PGlite), for a second connection of a test's own. */
  databaseUrl?: string;
  storage: Storage;
  orgId: string;
  userId: string;
  /** Inserts a session row of the fixture's org (or another org) and returns it. */
  session(opts?: { orgId?: string; userId?: string }): Promise<{ id: string; organization_id: string; user_id: string }>;
  org(): Promise<string>;
}

export const silentLog = pino({ level: 'silent' });

export function testKeyring() {
  return createKeyring({ current: `test:${randomBytes(32).toString('base64')}` });
}

/** A fresh PostgreSQL database (or PGlite with `pglite`) with the migrations applied, plus the storage over it. */
export async function storageFixture(t: TestContext, opts: Partial<StorageOptions> & { pglite?: boolean } = {}): Promise<StorageFixture> {
  let store: Store;
  let databaseUrl: string | undefined;
  if (opts.pglite) {
    const dataDir = mkdtempSync(join(tmpdir(), 'ass-storage-'));
    t.after(() => rmSync(dataDir, { recursive: true, force: true }));
    await seedEmbeddedDataDir(dataDir);
    store = await createStore({ dataDir, log: silentLog });
  } else {
    const db = await createTestDatabase('storage');
    databaseUrl = db.url;
    t.after(() => db.drop());
    store = await createStore({ databaseUrl: db.url, dataDir: '/tmp', log: silentLog, poolMax: 4 });
  }
  t.after(() => store.close());
  const storage = createStorage({ store, keyring: testKeyring(), log: silentLog }, opts);
  async function org(): Promise<string> {
    const id = newId();
    await store.sql(`insert into organizations (id, name, created_at, updated_at) values (?, ?, now(), now())`, [id, `org-${id}`]);
    return id;
  }
  async function user(orgId: string): Promise<string> {
    const id = newId();
    await store.sql(
      `insert into users (id, organization_id, email, name, role, created_at, updated_at) values (?, ?, ?, 'u', 'member', now(), now())`,
      [id, orgId, `${id}@example.test`],
    );
    return id;
  }
  const orgId = await org();
  const userId = await user(orgId);
  return {
    store,
    ...(databaseUrl ? { databaseUrl } : {}),
    storage,
    orgId,
    userId,
    org,
    async session({ orgId: o = orgId, userId: u = userId } = {}) {
      const id = newId();
      await store.sql(
        `insert into sessions (id, organization_id, user_id, harness_id, status, created_at, updated_at) values (?, ?, ?, ?, 'idle', now(), now())`,
        [id, o, u, newId()],
      );
      return { id, organization_id: o, user_id: u };
    },
  };
}
