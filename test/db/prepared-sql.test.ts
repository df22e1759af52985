import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createStore, preparedSql, type Store } from '../../src/db/index.js';
import { createLogger } from '../../src/log.js';
import { createTestDatabase } from '../helpers/postgres.js';
import { seedEmbeddedDataDir } from '../helpers/pglite-template.js';

const log = createLogger('silent');
const ECHO = preparedSql('test.echo', `select ?::int + 1 as n, ?::text || '!' as said, 'it''s' as quoted`);
const prepared = (store: Store) => store.sql<{ name: string }>('select name from pg_prepared_statements');

describe('prepared statements', () => {
  it('are prepared once per PostgreSQL connection and answer with each run’s own parameters', async (t) => {
    const db = await createTestDatabase('prepared');
    t.after(() => db.drop());
    // One connection, so the catalogue view below sees the connection that ran the statement.
    const store = await createStore({ databaseUrl: db.url, dataDir: '/nonexistent', log, poolMax: 1 });
    t.after(() => store.close());
    for (let i = 0; i < 7; i++) {
      assert.deepEqual(await store.sql(ECHO, [i, `run ${i}`]), [{ n: i + 1, said: `run ${i}!`, quoted: "it's" }]);
    }
    const names = (await prepared(store)).map((r) => r.name);
    assert.deepEqual(
      names.filter((n) => n === 'test.echo'),
      ['test.echo'],
      'one prepared statement however often it ran',
    );
  });

  it('run as ordinary statements when the operator turns them off (a pooler without prepared statements)', async (t) => {
    const db = await createTestDatabase('unprepared');
    t.after(() => db.drop());
    const store = await createStore({ databaseUrl: db.url, dataDir: '/nonexistent', log, poolMax: 1, preparedStatements: false });
    t.after(() => store.close());
    assert.deepEqual(await store.sql(ECHO, [1, 'x']), [{ n: 2, said: 'x!', quoted: "it's" }]);
    assert.deepEqual(await prepared(store), []);
  });

  it('are prepared once per pool connection of the embedded database, under names of their own in its one session', async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'ass-prepared-'));
    t.after(() => rmSync(dataDir, { recursive: true, force: true }));
    await seedEmbeddedDataDir(dataDir);
    const store = await createStore({ dataDir, log });
    t.after(() => store.close());
    // Concurrent first runs over the pool's connections: each prepares its own copy, none collides.
    const runs = async () => (await Promise.all([1, 2, 3, 4, 5, 6].map((i) => store.sql(ECHO, [i, 'x'])))).map((r) => r[0]);
    const expected = [1, 2, 3, 4, 5, 6].map((i) => ({ n: i + 1, said: 'x!', quoted: "it's" }));
    assert.deepEqual(await runs(), expected);
    const copies = async () => (await prepared(store)).map((r) => r.name).filter((n) => n.startsWith('test.echo.'));
    const first = await copies();
    assert.ok(first.length >= 1 && first.length <= 4, `one copy per connection at most: ${first}`);
    assert.deepEqual(await runs(), expected);
    assert.equal((await copies()).length, first.length, 'ran again on the copies already prepared');
    // A session that lost them (a restarted database thread) gets them prepared again.
    await store.sql('deallocate all');
    assert.deepEqual(await runs(), expected);
    assert.ok((await copies()).length >= 1);
  });

  it('run as ordinary statements on the embedded database when turned off', async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'ass-prepared-'));
    t.after(() => rmSync(dataDir, { recursive: true, force: true }));
    await seedEmbeddedDataDir(dataDir);
    const store = await createStore({ dataDir, log, preparedStatements: false });
    t.after(() => store.close());
    assert.deepEqual(await store.sql(ECHO, [1, 'x']), [{ n: 2, said: 'x!', quoted: "it's" }]);
    assert.deepEqual(await prepared(store), []);
  });

  it('refuse a question mark that is no placeholder', () => {
    assert.throws(() => preparedSql('test.literal', `select ? where 'why?' = ?`), /no placeholder/);
    assert.throws(() => preparedSql('test.operator', `select ? where '{}'::jsonb ?| array['a']`), /no placeholder/);
    assert.throws(() => preparedSql('Test "echo"', 'select 1'), /lower-case/);
    assert.equal(preparedSql('test.ok', `select 'a', ? , 'b', ?`).numbered, `select 'a', $1 , 'b', $2`);
  });
});
