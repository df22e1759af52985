import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { poolSizingWarning } from '../../src/db/pool-sizing.js';
import { startTestApp } from '../helpers/app.js';
import { TEST_PG_URL } from '../helpers/postgres.js';

test('pool sizing - fits: pool × instances up to exactly 80 % of max_connections (spec section 8)', () => {
  assert.equal(poolSizingWarning({ poolMax: 10, instances: 1, maxConnections: 100 }), null);
  assert.equal(poolSizingWarning({ poolMax: 40, instances: 2, maxConnections: 100 }), null, '80 of 80: exactly 80 % does not exceed it');
  assert.equal(poolSizingWarning({ poolMax: 20, instances: 4, maxConnections: 100 }), null);
  assert.equal(poolSizingWarning({ poolMax: 1, instances: 1, maxConnections: 2 }), null, '1 of 1.6');
});

test('pool sizing - exceeds 80 %: the warning says what was counted', () => {
  const w = poolSizingWarning({ poolMax: 41, instances: 2, maxConnections: 100 });
  assert.equal(
    w,
    'database pool too large: counted DATABASE_POOL_MAX 41 per instance × EXPECTED_INSTANCES 2 = 82 connections, which exceeds 80 % of max_connections 100 (80); ' +
      'workers outside EXPECTED_INSTANCES are not counted; lower DATABASE_POOL_MAX or raise max_connections',
  );
  assert.match(poolSizingWarning({ poolMax: 11, instances: 8, maxConnections: 100 })!, /= 88 connections/);
  assert.match(poolSizingWarning({ poolMax: 2, instances: 1, maxConnections: 2 })!, /max_connections 2 \(1\.6\)/);
});

async function maxConnections(): Promise<number> {
  const c = new pg.Client({ connectionString: TEST_PG_URL });
  await c.connect();
  try {
    return Number((await c.query('show max_connections')).rows[0].max_connections);
  } finally {
    await c.end();
  }
}

const warnings = (logs: string[]) =>
  logs
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => typeof l['msg'] === 'string' && (l['msg'] as string).startsWith('database pool too large'));

test('pool sizing - PostgreSQL: a pool too large for max_connections logs one warning at start; a fitting one none', async (t) => {
  const max = await maxConnections();
  const big = await startTestApp(t, { mode: 'postgres', env: { DATABASE_POOL_MAX: max, EXPECTED_INSTANCES: 2 } });
  const [w, ...more] = warnings(big.logs);
  assert.ok(w, 'warning logged');
  assert.equal(more.length, 0);
  assert.equal(w['level'], 40, 'pino warn');
  assert.equal(w['poolMax'], max);
  assert.equal(w['instances'], 2);
  assert.equal(w['maxConnections'], max);
  assert.equal((await big.request('GET', '/health')).status, 200, 'a warning, not a refusal');

  const fits = await startTestApp(t, {
    mode: 'postgres',
    databaseUrl: big.databaseUrl,
    env: { DATABASE_POOL_MAX: 2, EXPECTED_INSTANCES: 1 },
  });
  assert.deepEqual(warnings(fits.logs), []);
});

test('pool sizing - PGlite is not checked', async (t) => {
  const app = await startTestApp(t, { mode: 'pglite', env: { DATABASE_POOL_MAX: 1000, EXPECTED_INSTANCES: 100 } });
  assert.deepEqual(warnings(app.logs), []);
});
