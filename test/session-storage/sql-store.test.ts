import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { storageFixture } from './helpers.js';

describe('session SQL databases (PostgreSQL)', () => {
  it('persists bytes per (session, name); sessions and names are isolated', async (t) => {
    const fx = await storageFixture(t);
    const a = fx.storage.forSession(await fx.session()).sql;
    const b = fx.storage.forSession(await fx.session()).sql;
    const main = await a.open('main', { create: true });
    await main.exec('create table notes (id integer primary key, body text)');
    const res = await main.exec('insert into notes (body) values (?)', ['secret of a']);
    assert.deepEqual(res, { changes: 1, last_insert_rowid: 1 });
    const rows = await (await a.open('main')).query('select body from notes');
    assert.deepEqual(rows, { columns: ['body'], rows: [['secret of a']], truncated: false });

    await assert.rejects(b.open('main'), { status: 404 });
    const bMain = await b.open('main', { create: true });
    await assert.rejects(bMain.query('select * from notes'), { status: 422 });
    await assert.rejects((await a.open('other', { create: true })).query('select * from notes'), { status: 422 });
    await assert.rejects(main.exec(`attach database 'x' as y`), { status: 422 });
    assert.deepEqual(
      (await a.list()).map((d) => d.name),
      ['main', 'other'],
    );
    assert.deepEqual(
      (await b.list()).map((d) => d.name),
      ['main'],
    );
    assert.equal((await main.schema())[0]!.name, 'notes');
  });

  it('serialises concurrent writers: no lost update', async (t) => {
    const fx = await storageFixture(t);
    const sql = fx.storage.forSession(await fx.session()).sql;
    const db = await sql.open('counter', { create: true });
    await db.exec('create table c (n integer); insert into c values (0)');
    await Promise.all(Array.from({ length: 10 }, async () => (await sql.open('counter')).exec('update c set n = n + 1')));
    assert.deepEqual((await db.query('select n from c')).rows, [[10]]);
  });

  it('refuses a database over the size cap with 413 and keeps the old bytes', async (t) => {
    const fx = await storageFixture(t, { maxSqlDatabaseBytes: 20_000 });
    const sql = fx.storage.forSession(await fx.session()).sql;
    const db = await sql.open('big', { create: true });
    await db.exec('create table b (x blob)');
    await assert.rejects(db.exec('insert into b values (zeroblob(50000))'), { status: 413 });
    assert.deepEqual((await db.query('select count(*) from b')).rows, [[0]]);
  });
});
