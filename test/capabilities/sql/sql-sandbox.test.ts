import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { createSqlSandbox, type SqlSandbox } from '../../../src/capabilities/sql/sql-sandbox.js';
import { startTestApp, request, type TestApp } from '../../helpers/app.js';
import { createSqlSession, runSql, RUNAWAY_SQL } from '../../helpers/sql-tools.js';

/** A session of the one organisation these tests use (sessions `a` and `b` share its fair share). */
const who = (session: string) => ({ org: 'org-1', key: session });

const status = (code: number, pattern: RegExp) => (e: unknown) =>
  (e as { status?: number }).status === code && pattern.test((e as Error).message);

/** A sandbox that is closed after the test, started once so worker start-up is not measured. */
async function warmSandbox(t: { after(fn: () => unknown): void }, opts: Parameters<typeof createSqlSandbox>[0]): Promise<SqlSandbox> {
  const sandbox = createSqlSandbox(opts);
  t.after(() => sandbox.close());
  await sandbox.create(who('warm-up'));
  return sandbox;
}

async function tableWithRows(sandbox: SqlSandbox, sql: string, maxDatabaseBytes = 10_000_000): Promise<Uint8Array> {
  return (await sandbox.exec(who('setup'), await sandbox.create(who('setup')), sql, undefined, { maxDatabaseBytes })).bytes;
}

describe('SQL sandbox (worker threads)', () => {
  it('stops a runaway recursive CTE at the deadline without blocking the event loop, then serves the next call on a fresh worker', async (t) => {
    const sandbox = await warmSandbox(t, { workers: 1, timeoutMs: 300 });
    const bytes = await tableWithRows(sandbox, 'CREATE TABLE t (x); INSERT INTO t VALUES (1), (2)');
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const started = performance.now();
    await assert.rejects(
      sandbox.query(who('s'), bytes.slice(), RUNAWAY_SQL),
      status(422, /exceeded the 0\.3 s limit and was stopped; nothing was saved/),
    );
    const elapsed = performance.now() - started;
    delay.disable();
    t.diagnostic(`runaway stopped after ${elapsed.toFixed(0)} ms; event loop delay max ${(delay.max / 1e6).toFixed(1)} ms`);
    assert.ok(elapsed >= 290 && elapsed < 300 + 700, `stopped after ${elapsed} ms`);
    assert.ok(delay.max / 1e6 < 100, `event loop stalled ${delay.max / 1e6} ms`);
    assert.equal(sandbox.stats().replaced, 1);
    assert.deepEqual(await sandbox.query(who('s'), bytes.slice(), 'SELECT count(*) FROM t'), {
      columns: ['count(*)'],
      rows: [[2]],
      truncated: false,
    });
    // a runaway exec saves nothing: the caller never gets new bytes
    await assert.rejects(
      sandbox.exec(who('s'), bytes.slice(), `INSERT INTO t ${RUNAWAY_SQL}`, undefined, { maxDatabaseBytes: 1e7 }),
      status(422, /limit and was stopped/),
    );
    assert.equal(sandbox.stats().replaced, 2);
  });

  it('refuses memory hogs, oversized results and files over the size cap with 413', async (t) => {
    const sandbox = await warmSandbox(t, { workers: 1, memoryBytes: 16 * 1024 * 1024, maxResultBytes: 1024 * 1024 });
    const bytes = await tableWithRows(sandbox, 'CREATE TABLE b (x BLOB)');
    await assert.rejects(
      sandbox.query(who('s'), bytes.slice(), 'SELECT length(randomblob(100000000))'),
      status(413, /exceeded the memory limit/),
    );
    await assert.rejects(
      sandbox.query(who('s'), bytes.slice(), "SELECT length(printf('%.*c', 50000000, 'x'))"),
      status(413, /memory limit/),
    );
    // temporary tables live in SQLite's capped heap, not in the engine's file system
    await assert.rejects(
      sandbox.exec(
        who('s'),
        bytes.slice(),
        'CREATE TEMP TABLE big AS WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 100) SELECT randomblob(1000000) FROM c',
        undefined,
        { maxDatabaseBytes: 1e9 },
      ),
      status(413, /memory limit/),
    );
    await assert.rejects(
      sandbox.query(
        who('s'),
        bytes.slice(),
        'WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 100) SELECT randomblob(100000) FROM c',
      ),
      status(413, /result exceeds 1048576 bytes/),
    );
    await assert.rejects(
      sandbox.exec(
        who('s'),
        bytes.slice(),
        'INSERT INTO b SELECT randomblob(10000) FROM (WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 100) SELECT i FROM c)',
        undefined,
        { maxDatabaseBytes: 100_000 },
      ),
      status(413, /would exceed its size limit of 100000 bytes/),
    );
    const fits = await sandbox.exec(who('s'), bytes.slice(), 'INSERT INTO b VALUES (randomblob(10000))', undefined, {
      maxDatabaseBytes: 100_000,
    });
    assert.equal(fits.result.changes, 1);
    assert.equal(sandbox.stats().replaced, 0, 'SQLite refused these itself; no worker had to die');
  });

  it('kills and replaces a worker whose JS heap outgrows its resource limit (413), then serves the next call', async (t) => {
    // A result cap far above the heap so that only resourceLimits can stop this query.
    const sandbox = await warmSandbox(t, { workers: 1, workerHeapMb: 32, maxResultBytes: 2 ** 31 });
    const bytes = await tableWithRows(sandbox, 'CREATE TABLE t (x)');
    await assert.rejects(
      sandbox.query(
        who('s'),
        bytes.slice(),
        "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 1000) SELECT printf('%.*c', 1000000, 'x') || i FROM c",
      ),
      status(413, /exceeded the memory limit and was stopped/),
    );
    assert.equal(sandbox.stats().replaced, 1);
    assert.deepEqual((await sandbox.query(who('s'), bytes.slice(), 'SELECT 1')).rows, [[1]]);
  });

  it('caps rows at the query limit even when the statement could produce millions', async (t) => {
    const sandbox = await warmSandbox(t, { workers: 1 });
    const bytes = await tableWithRows(sandbox, 'CREATE TABLE t (x)');
    const many = await sandbox.query(
      who('s'),
      bytes.slice(),
      'WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 5000000) SELECT i FROM c',
    );
    assert.equal(many.rows.length, 1000);
    assert.equal(many.truncated, true);
    const few = await sandbox.query(
      who('s'),
      bytes.slice(),
      'WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 5000000) SELECT i FROM c',
      undefined,
      { limit: 3 },
    );
    assert.deepEqual(few.rows, [[1], [2], [3]]);
  });

  it('bounds the work one session (429) and everyone (503) may queue', async (t) => {
    const sandbox = await warmSandbox(t, { workers: 1, timeoutMs: 400, queueMax: 1, queueMaxPerKey: 2 });
    const bytes = await tableWithRows(sandbox, 'CREATE TABLE t (x)');
    const running = sandbox.query(who('a'), bytes.slice(), RUNAWAY_SQL);
    const waiting = sandbox.query(who('a'), bytes.slice(), 'SELECT 1');
    await assert.rejects(
      sandbox.query(who('a'), bytes.slice(), 'SELECT 2'),
      status(429, /Too many SQL statements at once for this session \(at most 2\)/),
    );
    await assert.rejects(sandbox.query(who('b'), bytes.slice(), 'SELECT 3'), status(503, /SQL engine is busy/));
    await assert.rejects(running, status(422, /limit and was stopped/));
    assert.deepEqual((await waiting).rows, [[1]]);
    assert.deepEqual((await sandbox.query(who('a'), bytes.slice(), 'SELECT 4')).rows, [[4]]);
    assert.deepEqual(sandbox.stats(), { workers: 1, busy: 0, queued: 0, replaced: 1 });
  });

  it('refuses pragmas that would lift its limits', async (t) => {
    const sandbox = await warmSandbox(t, { workers: 1 });
    const bytes = await tableWithRows(sandbox, 'CREATE TABLE t (x)');
    for (const sql of [
      'PRAGMA max_page_count = 999999999',
      'PRAGMA main.page_size = 65536',
      'pragma temp_store=FILE',
      'PRAGMA soft_heap_limit = 0',
    ]) {
      await assert.rejects(
        sandbox.exec(who('s'), bytes.slice(), sql, undefined, { maxDatabaseBytes: 1e6 }),
        status(422, /is not allowed: the service sets it/),
        sql,
      );
    }
    assert.deepEqual((await sandbox.query(who('s'), bytes.slice(), "PRAGMA table_info('t')")).rows.length, 1);
  });
});

/** Polls GET /health every ~20 ms until stopped; resolves with the slowest answer in ms. */
function pollHealth(app: TestApp): { stop(): Promise<{ max: number; count: number }> } {
  let running = true;
  const done = (async () => {
    let max = 0;
    let count = 0;
    while (running) {
      const started = performance.now();
      const res = await request(app.url, 'GET', '/health');
      max = Math.max(max, performance.now() - started);
      count++;
      assert.equal(res.status, 200);
      await new Promise((r) => setTimeout(r, 20));
    }
    return { max, count };
  })();
  return {
    stop: async () => {
      running = false;
      return done;
    },
  };
}

describe('session_sql_database through real turns (sandboxed)', () => {
  it('a runaway statement ends in a clear tool error near the deadline while /health keeps answering within 100 ms; the next statement works', async (t) => {
    const app = await startTestApp(t, { env: { SQL_STATEMENT_TIMEOUT_MS: 500 } });
    const id = await createSqlSession(app);
    const created = await runSql(app, id, 'CREATE TABLE t (x); INSERT INTO t VALUES (1)');
    assert.equal(created.success, true, created.error);

    const health = pollHealth(app);
    const started = performance.now();
    const runaway = await runSql(app, id, RUNAWAY_SQL);
    const elapsed = performance.now() - started;
    const { max, count } = await health.stop();
    t.diagnostic(`runaway turn ended after ${elapsed.toFixed(0)} ms; ${count} health probes, slowest ${max.toFixed(1)} ms`);
    assert.equal(runaway.success, false);
    assert.match(runaway.error!, /exceeded the 0\.5 s limit and was stopped; nothing was saved/);
    assert.ok(elapsed < 500 + 2500, `the turn took ${elapsed} ms`);
    assert.ok(count >= 10, `only ${count} health probes`);
    assert.ok(max < 100, `GET /health took up to ${max} ms during the runaway statement`);
    assert.equal(app.app.services.storage.sqlSandbox.stats().replaced, 1);

    const after = await runSql(app, id, 'SELECT count(*) AS n FROM t', { tool: 'sql_query' });
    assert.equal(after.success, true, after.error);
    assert.deepEqual(after.result.rows, [[1]]);
  });

  it('enforces the database size quota, the databases-per-session quota and the memory cap, saving nothing', async (t) => {
    const app = await startTestApp(t, { env: { SQL_DATABASE_MAX_BYTES: 65536, SQL_DATABASES_PER_SESSION: 2, SQL_MEMORY_LIMIT_MB: 16 } });
    const id = await createSqlSession(app);
    assert.equal((await runSql(app, id, 'CREATE TABLE b (x BLOB)')).success, true);

    const big = await runSql(app, id, 'INSERT INTO b VALUES (zeroblob(100000))');
    assert.equal(big.success, false);
    assert.match(big.error!, /would exceed its size limit of 65536 bytes/);
    const hog = await runSql(app, id, 'INSERT INTO b VALUES (randomblob(50000000))');
    assert.equal(hog.success, false);
    assert.match(hog.error!, /exceeded the memory limit/);
    const count = await runSql(app, id, 'SELECT count(*) FROM b', { tool: 'sql_query' });
    assert.deepEqual(count.result.rows, [[0]]);

    assert.equal((await runSql(app, id, 'CREATE TABLE x (y)', { database: 'second' })).success, true);
    const third = await runSql(app, id, 'CREATE TABLE x (y)', { database: 'third' });
    assert.equal(third.success, false);
    assert.match(third.error!, /already has 2 SQL databases, the maximum/);
    const [listed] = await app.app.services.store.sql<{ n: unknown }>(
      'select count(*) as n from session_sql_databases where session_id = ?',
      [id],
    );
    assert.equal(Number(listed!.n), 2);
  });
});
