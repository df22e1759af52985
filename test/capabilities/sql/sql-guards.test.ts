/**
 * Issue 30 item 4: the SQL guard reads pragma names as SQLite does (quoted in any of its four
 * ways), and a statement that tries to grow a database past its cap stops at the cap while it
 * runs, with the process's memory bounded.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSqlSandbox } from '../../../src/capabilities/sql/sql-sandbox.js';
import { startTestApp } from '../../helpers/app.js';
import { createSqlSession, runSql } from '../../helpers/sql-tools.js';

const who = { org: 'org-1', key: 'session-1' };
const MiB = 1024 * 1024;

/** 2,000 rows of 100 kB: a 200 MB table unless something stops it. */
const GROW_200_MB =
  'CREATE TABLE big AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 2000) SELECT randomblob(100000) AS b FROM c';

const QUOTED_PRAGMAS = [
  'PRAGMA "max_page_count"=2147483646',
  "PRAGMA 'max_page_count'=2147483646",
  'PRAGMA [temp_store]=FILE',
  'PRAGMA `temp_store`=2',
  "PRAGMA main.'page_size'=65536",
  'PRAGMA "hard_heap_limit"=1',
  "PRAGMA 'soft_heap_limit'=1",
];

describe('SQL guard against limit pragmas and oversized databases (issue 30 item 4)', () => {
  it('refuses every quoted form of a limit pragma with 422 before SQLite sees it', async (t) => {
    // The wall-clock deadline is not under test here, and on a loaded CI machine the 20 MB query
    // below once took longer than the 5 s default (88 ms when idle).
    const sandbox = createSqlSandbox({ workers: 1, timeoutMs: 60_000 });
    t.after(() => sandbox.close());
    const empty = await sandbox.create(who);
    for (const sql of QUOTED_PRAGMAS) {
      await assert.rejects(
        sandbox.exec(who, empty.slice(), `${sql}; ${GROW_200_MB}`, undefined, { maxDatabaseBytes: MiB }),
        (e: unknown) => (e as { status?: number }).status === 422 && /is not allowed: the service sets it/.test((e as Error).message),
        sql,
      );
      await assert.rejects(sandbox.query(who, empty.slice(), sql), (e: unknown) => (e as { status?: number }).status === 422, sql);
    }
    // The worker's heap limit is intact: a query that needs 20 MB still runs under the 64 MB default.
    const fits = await sandbox.query(who, empty.slice(), 'SELECT length(randomblob(20000000))');
    assert.deepEqual(fits.rows, [[20_000_000]]);
  });

  it('stops two parallel statements growing a database at the size cap while they run, memory bounded', async (t) => {
    const sandbox = createSqlSandbox({ workers: 2 });
    t.after(() => sandbox.close());
    const empty = await sandbox.create(who);
    const rssBefore = process.memoryUsage().rss;
    let peak = rssBefore;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 10);
    const started = performance.now();
    const results = await Promise.allSettled(
      [1, 2].map((n) => sandbox.exec({ org: 'org-1', key: `s${n}` }, empty.slice(), GROW_200_MB, undefined, { maxDatabaseBytes: MiB })),
    );
    clearInterval(sampler);
    const elapsed = performance.now() - started;
    t.diagnostic(`two 200 MB inserts stopped after ${elapsed.toFixed(0)} ms; RSS +${((peak - rssBefore) / MiB).toFixed(0)} MB at most`);
    for (const r of results) {
      assert.equal(r.status, 'rejected');
      assert.equal((r.reason as { status?: number }).status, 413);
      assert.match((r.reason as Error).message, /would exceed its size limit of 1048576 bytes/);
    }
    assert.ok(peak - rssBefore < 150 * MiB, `RSS grew by ${((peak - rssBefore) / MiB).toFixed(0)} MB`);
  });

  it('through a real turn: a quoted max_page_count is a tool error and nothing grows', async (t) => {
    const app = await startTestApp(t, { env: { SQL_DATABASE_MAX_BYTES: MiB } });
    const id = await createSqlSession(app);
    assert.equal((await runSql(app, id, 'CREATE TABLE t (x)')).success, true);
    const rssBefore = process.memoryUsage().rss;
    const outcome = await runSql(app, id, `PRAGMA "max_page_count"=2147483646; ${GROW_200_MB}`);
    const grown = process.memoryUsage().rss - rssBefore;
    t.diagnostic(`RSS +${(grown / MiB).toFixed(0)} MB`);
    assert.equal(outcome.success, false);
    assert.match(outcome.error!, /PRAGMA max_page_count is not allowed: the service sets it/);
    const temp = await runSql(app, id, 'PRAGMA [temp_store]=FILE');
    assert.equal(temp.success, false);
    assert.match(temp.error!, /PRAGMA temp_store is not allowed/);
    const [row] = await app.app.services.store.sql<{ size_bytes: unknown }>(
      'select size_bytes from session_sql_databases where session_id = ?',
      [id],
    );
    assert.ok(Number(row!.size_bytes) < 64 * 1024, `the database is ${String(row!.size_bytes)} bytes`);
    assert.ok(grown < 150 * MiB, `RSS grew by ${(grown / MiB).toFixed(0)} MB`);
  });
});
