import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import type { PostgreSqlConnection } from '@mikro-orm/postgresql';
import pg from 'pg';
import { createStore, preparedSql, type Store } from '../../src/db/index.js';
import { createLogger } from '../../src/log.js';
import { seedEmbeddedDataDir } from '../helpers/pglite-template.js';
import { createTestDatabase } from '../helpers/postgres.js';

const log = createLogger('silent');

/** Everything inlining into a literal would have to escape, and what bound parameters pass as they are. */
const AWKWARD = `it's "quoted" \\ back\\slash ? $1 $2 ?| é 😀 \u2028 tab\tcr\rlf\n \u0001\u001f end`;
const ROUND_TRIP = preparedSql(
  'test.bound.round-trip',
  `select ?::text as text, ?::jsonb as json, ?::timestamptz as at, ?::text[] as list, ?::text = any(?::text[]) as found, ?::int as n`,
);
const ECHO = preparedSql('test.bound.echo', 'select ?::text as said, ?::int as n');

/** The text of every statement the driver sends, prepared or not (pg's Client.prototype.query, wrapped for the test). */
function recordStatementTexts(t: TestContext): string[] {
  const texts: string[] = [];
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, config: unknown, ...rest: unknown[]) {
    texts.push(typeof config === 'string' ? config : String((config as { text?: unknown })?.text ?? ''));
    return (query as (...args: unknown[]) => unknown).call(this, config, ...rest);
  } as typeof query;
  t.after(() => {
    pg.Client.prototype.query = query;
  });
  return texts;
}

async function embeddedStore(t: TestContext): Promise<Store> {
  const dataDir = mkdtempSync(join(tmpdir(), 'ass-bound-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  await seedEmbeddedDataDir(dataDir);
  const store = await createStore({ dataDir, log });
  t.after(() => store.close());
  return store;
}

async function postgresStore(t: TestContext): Promise<Store> {
  const db = await createTestDatabase('bound');
  t.after(() => db.drop());
  const store = await createStore({ databaseUrl: db.url, dataDir: '/nonexistent', log, poolMax: 4 });
  t.after(() => store.close());
  return store;
}

const pool = (store: Store) => (store.orm.em.getConnection() as unknown as PostgreSqlConnection).getNativeClient();
const copiesOf = async (store: Store, name: string) =>
  (await store.sql<{ name: string }>('select name from pg_prepared_statements')).map((r) => r.name).filter((n) => n.startsWith(`${name}.`));

for (const [mode, open] of [
  ['embedded', embeddedStore],
  ['PostgreSQL', postgresStore],
] as const) {
  describe(`prepared statements with bound parameters (${mode})`, () => {
    it('round-trip quotes, backslashes, placeholders, unicode, control characters, JSON, timestamps and arrays, none written into a statement', async (t) => {
      const store = await open(t);
      const texts = recordStatementTexts(t);
      const json = { text: AWKWARD, nested: [AWKWARD, 1.5, null, true], [AWKWARD]: 'key' };
      const at = new Date('2026-11-30T15:21:06.123Z');
      const list = [AWKWARD, 'a,b', '{braces}', 'NULL', ''];
      const [row] = await store.sql(ROUND_TRIP, [AWKWARD, JSON.stringify(json), at, list, 'a,b', list, 7]);
      // Timestamps come back as text in both modes (the ORM's type parsers): compared as instants.
      assert.deepEqual(
        { ...row, at: new Date(String(row?.['at'])).getTime() },
        { text: AWKWARD, json, at: at.getTime(), list, found: true, n: 7 },
      );
      assert.ok(texts.length > 0, 'the driver was watched');
      // The old embedded path sent `execute "name"('…the value…')`: the value was in the text.
      const carrying = texts.filter((text) => text.includes('back\\slash') || text.includes('{braces}'));
      assert.deepEqual(carrying, [], 'no statement text carries a parameter');
    });

    it('run the same statement on all the pool’s connections at once, each answering with its own parameters', async (t) => {
      const store = await open(t);
      const many = Array.from({ length: 40 }, (_, i) => i);
      // Four clients held at once: the runs below spread over all of them.
      const clients = await Promise.all([1, 2, 3, 4].map(async () => (await pool(store)).connect()));
      for (const c of clients) c.release();
      const rows = await Promise.all(many.map((i) => store.sql(ECHO, [`run ${i} '${'x'.repeat(i * 1000)}'`, i])));
      assert.deepEqual(
        rows.map((r) => r[0]),
        many.map((i) => ({ said: `run ${i} '${'x'.repeat(i * 1000)}'`, n: i })),
      );
      if (mode === 'embedded') {
        const copies = await copiesOf(store, ECHO.name);
        assert.ok(copies.length >= 2 && copies.length <= 4, `a copy per connection that ran it: ${copies}`);
      }
    });
  });
}

describe('prepared statements on the embedded database’s shared session', () => {
  it('run again after the session lost them, and an ended connection’s copies are dropped', async (t) => {
    const store = await embeddedStore(t);
    assert.deepEqual(await store.sql(ECHO, ['a', 1]), [{ said: 'a', n: 1 }]);
    await store.sql('deallocate all');
    assert.deepEqual(await store.sql(ECHO, ['b', 2]), [{ said: 'b', n: 2 }], 'prepared again after 26000');
    assert.equal((await copiesOf(store, ECHO.name)).length, 1);
    // Four runs at once on the pool's four idle connections: a copy on each.
    const clients = await Promise.all([1, 2, 3, 4].map(async () => (await pool(store)).connect()));
    for (const c of clients) c.release();
    await Promise.all([1, 2, 3, 4].map((i) => store.sql(ECHO, [`${i}`, i])));
    assert.equal((await copiesOf(store, ECHO.name)).length, 4);
    // One connection ends (as the pool's idle timeout ends one): the next run drops its copies.
    const leaving = await (await pool(store)).connect();
    const ended = once(leaving, 'end');
    leaving.release(true);
    await ended;
    assert.deepEqual(await store.sql(ECHO, ['c', 3]), [{ said: 'c', n: 3 }]);
    assert.equal((await copiesOf(store, ECHO.name)).length, 3, 'the ended connection’s copy is gone');
  });

  it('a statement the database refuses leaves its connection in the pool', async (t) => {
    const store = await embeddedStore(t);
    const DIVIDE = preparedSql('test.bound.divide', 'select 1 / ?::int as q');
    const p = await pool(store);
    assert.deepEqual(await store.sql(DIVIDE, [1]), [{ q: 1 }]);
    const total = p.totalCount;
    await assert.rejects(store.sql(DIVIDE, [0]), { code: '22012' });
    assert.equal(p.totalCount, total, 'not ended');
    assert.deepEqual(await store.sql(DIVIDE, [1]), [{ q: 1 }]);
  });
});
