import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger } from '../src/log.js';
import { createStore } from '../src/db/index.js';
import { createTestDatabase } from './helpers/postgres.js';

describe('store', () => {
  it('applies the checked-in migrations exactly once when three instances start at once on an empty database', async (t) => {
    const db = await createTestDatabase('migrate');
    t.after(() => db.drop());
    const log = createLogger('silent');
    const stores = await Promise.all([1, 2, 3].map(() => createStore({ databaseUrl: db.url, dataDir: '/nonexistent', log })));
    t.after(() => Promise.all(stores.map((s) => s.close())));
    const rows = await stores[0]!.sql<{ name: string }>('select name from mikro_orm_migrations order by id');
    const names = rows.map((r) => r.name);
    assert.equal(new Set(names).size, names.length, 'no migration recorded twice');
    assert.ok(names.includes('0001-core'));
    for (const s of stores) await s.ping();
  });
});
