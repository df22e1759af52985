import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sessionSqlDatabaseCapability } from '../../../src/capabilities/sql/capability.js';
import { ToolError } from '../../../src/capabilities/types.js';
import { createFakeToolContext, jsonOf, toolOf } from '../fakes.js';

const tool = (name: string) => toolOf(sessionSqlDatabaseCapability, name);
const isToolError = (pattern: RegExp) => (e: unknown) => e instanceof ToolError && pattern.test(e.message);

describe('session_sql_database tools', () => {
  it('creates a database on first sql_execute, persists it, and queries it', async () => {
    const ctx = createFakeToolContext();
    const created = jsonOf(
      await tool('sql_execute').execute({ database: 'crm', sql: 'CREATE TABLE c (id INTEGER PRIMARY KEY, name TEXT, vip INTEGER)' }, ctx),
    );
    assert.deepEqual(created, { database: 'crm', changes: 0, last_insert_rowid: 0 });
    const inserted = jsonOf(
      await tool('sql_execute').execute({ database: 'crm', sql: 'INSERT INTO c (name, vip) VALUES (?, ?)', params: ['Ada', true] }, ctx),
    );
    assert.deepEqual(inserted, { database: 'crm', changes: 1, last_insert_rowid: 1 });
    assert.ok(ctx.sql.bytes.get('crm')!.length > 0);
    const rows = jsonOf(
      await tool('sql_query').execute({ database: 'crm', sql: "SELECT name, vip, x'ff' AS b FROM c WHERE vip = ?", params: [1] }, ctx),
    );
    assert.deepEqual(rows, {
      database: 'crm',
      columns: ['name', 'vip', 'b'],
      rows: [['Ada', 1, { blob_base64: '/w==' }]],
      row_count: 1,
      truncated: false,
    });
  });

  it('flags truncated results and honours limit', async () => {
    const ctx = createFakeToolContext();
    await tool('sql_execute').execute(
      {
        database: 'd',
        sql: 'CREATE TABLE n (i); WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i < 1001) INSERT INTO n SELECT i FROM c',
      },
      ctx,
    );
    const full = jsonOf(await tool('sql_query').execute({ database: 'd', sql: 'SELECT i FROM n' }, ctx));
    assert.equal(full['row_count'], 1000);
    assert.equal(full['truncated'], true);
    const few = jsonOf(await tool('sql_query').execute({ database: 'd', sql: 'SELECT i FROM n', limit: 3 }, ctx));
    assert.equal(few['row_count'], 3);
    await assert.rejects(
      tool('sql_query').execute({ database: 'd', sql: 'SELECT 1', limit: 1001 }, ctx),
      isToolError(/"limit" must be <= 1000/),
    );
  });

  it('lists databases and describes a schema', async () => {
    const ctx = createFakeToolContext();
    await tool('sql_execute').execute({ database: 'b_db', sql: 'CREATE TABLE t (x TEXT)' }, ctx);
    await tool('sql_execute').execute({ database: 'a_db', sql: 'CREATE TABLE u (y INTEGER)' }, ctx);
    const listed = jsonOf<{ databases: { name: string }[] }>(await tool('sql_schema').execute({}, ctx));
    assert.deepEqual(
      listed.databases.map((d) => d.name),
      ['a_db', 'b_db'],
    );
    const schema = jsonOf<{ objects: { name: string; columns: { name: string }[] }[] }>(
      await tool('sql_schema').execute({ database: 'b_db' }, ctx),
    );
    assert.deepEqual(
      schema.objects.map((o) => [o.name, o.columns.map((c) => c.name)]),
      [['t', ['x']]],
    );
  });

  it('keeps each database to itself', async () => {
    const ctx = createFakeToolContext();
    await tool('sql_execute').execute({ database: 'one', sql: 'CREATE TABLE secret_table (x)' }, ctx);
    await tool('sql_execute').execute({ database: 'two', sql: 'CREATE TABLE other (y)' }, ctx);
    await assert.rejects(
      tool('sql_query').execute({ database: 'two', sql: 'SELECT * FROM secret_table' }, ctx),
      isToolError(/no such table/),
    );
  });

  it('refuses bad names, unknown databases for reads, writes through sql_query and SQL errors', async () => {
    const ctx = createFakeToolContext();
    await assert.rejects(tool('sql_execute').execute({ database: 'bad-name', sql: 'SELECT 1' }, ctx), isToolError(/Invalid database name/));
    await assert.rejects(
      tool('sql_execute').execute({ database: 'x'.repeat(65), sql: 'SELECT 1' }, ctx),
      isToolError(/Invalid database name/),
    );
    await assert.rejects(
      tool('sql_query').execute({ database: 'missing', sql: 'SELECT 1' }, ctx),
      isToolError(/Database not found: missing/),
    );
    await assert.rejects(tool('sql_schema').execute({ database: 'missing' }, ctx), isToolError(/Database not found/));
    await tool('sql_execute').execute({ database: 'd', sql: 'CREATE TABLE t (x)' }, ctx);
    await assert.rejects(tool('sql_query').execute({ database: 'd', sql: 'INSERT INTO t VALUES (1)' }, ctx), isToolError(/read-only/));
    await assert.rejects(
      tool('sql_execute').execute({ database: 'd', sql: 'INSERT INTO nope VALUES (1)' }, ctx),
      isToolError(/no such table: nope/),
    );
    assert.equal(ctx.sql.bytes.has('missing'), false);
  });
});
