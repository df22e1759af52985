import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { test } from 'node:test';
import { createSession, upload } from '../api/fs/helpers.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { deepYaml, redosFile, yamlAliasBomb } from '../helpers/hostile-inputs.js';
import { RUNAWAY_SQL, runSql } from '../helpers/sql-tools.js';

/**
 * Issue 12's proof that no caller-controlled work runs unbounded on the event loop: while a
 * runaway SQL statement, a catastrophic-backtracking regular expression, a YAML alias bomb and
 * a YAML nesting bomb are in flight together on one instance, its `/health` keeps answering
 * (median within 20 ms, none slower than 250 ms), and each hostile request ends with a clear answer.
 *
 * Why two bounds and not one 100 ms bound: on a 2-core machine the SQL worker and both parse
 * workers run at full speed beside the request thread during the first few hundred ms, and the
 * OS alone then leaves single answers at 100-180 ms (measured 2026-11-28 with the machine
 * otherwise idle, on this tree and before the session's changes alike), a third of runs over
 * 100 ms. A loop that one request blocks fails either bound: every answer waits behind the
 * block, so one is as slow as the block and the median rises with it.
 */

const HEALTH_MEDIAN_MS = 20;
const HEALTH_MAX_MS = 250;

/** Polls `/health` every 10 ms until `done` settles; returns the slowest answer seen. */
async function slowestHealth(app: TestApp, done: Promise<unknown>): Promise<{ max: number; count: number; all: number[] }> {
  let finished = false;
  void done.then(
    () => (finished = true),
    () => (finished = true),
  );
  let max = 0;
  let count = 0;
  const all: number[] = [];
  while (!finished) {
    const t0 = performance.now();
    const r = await fetch(`${app.url}/health`);
    await r.arrayBuffer();
    assert.equal(r.status, 200);
    const ms = performance.now() - t0;
    all.push(ms);
    max = Math.max(max, ms);
    count++;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return { max, count, all };
}

test('hostile SQL, regex and YAML in flight together: /health keeps answering (median < 20 ms, max < 250 ms), each request ends cleanly', async (t) => {
  const app = await startTestApp(t, { mode: 'postgres', env: { SQL_STATEMENT_TIMEOUT_MS: 1500, PARSE_TIMEOUT_MS: 1500 } });
  const id = await createSession(app, ['session_sql_database', 'session_file_system']);
  assert.equal((await upload(app, id, 'big.txt', redosFile())).status, 201);
  const importYaml = (raw: string) => app.request('POST', '/v1/agents/import', { raw, headers: { 'content-type': 'application/yaml' } });
  // Warm both worker pools first (they start on first use): what is measured is hostile input, not a cold start.
  assert.equal((await runSql(app, id, 'SELECT 1')).success, true);
  assert.equal((await importYaml('name: warm\nsystem_prompt: hi\n')).status, 201);
  // And the other routes once (first use compiles their code paths), with benign input.
  assert.equal((await app.request('POST', `/v1/sessions/${id}/fs/_/grep`, { body: { pattern: 'b' } })).status, 200);
  for (let i = 0; i < 3; i++) assert.equal((await fetch(`${app.url}/health`)).status, 200);

  const all = Promise.all([
    runSql(app, id, RUNAWAY_SQL, { timeoutMs: 30_000 }),
    app.request('POST', `/v1/sessions/${id}/fs/_/grep`, { body: { pattern: '^(a+)+$' } }),
    importYaml(yamlAliasBomb()),
    importYaml(deepYaml()),
  ]);
  const health = await slowestHealth(app, all);
  const [sql, grep, aliasBomb, nestingBomb] = await all;

  t.diagnostic(`health latencies (ms): ${health.all.map((l) => l.toFixed(0)).join(' ')}`);
  assert.ok(health.count >= 5, `health was polled ${health.count} times`);
  assert.ok(health.max < HEALTH_MAX_MS, `slowest /health answer took ${health.max.toFixed(1)} ms`);
  const median = [...health.all].sort((a, b) => a - b)[Math.floor(health.all.length / 2)]!;
  assert.ok(median < HEALTH_MEDIAN_MS, `median /health answer took ${median.toFixed(1)} ms`);

  assert.equal(sql.success, false);
  assert.match(String(sql.error), /exceeded the 1\.5 s limit and was stopped/);
  assert.equal(grep.status, 200, grep.text);
  for (const bomb of [aliasBomb, nestingBomb]) {
    assert.equal(bomb.status, 400, bomb.text);
    assert.deepEqual(Object.keys(bomb.body).sort(), ['error', 'status']);
  }
  assert.match(aliasBomb.body.error, /alias/i);
});
