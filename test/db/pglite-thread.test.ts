import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createLogger } from '../../src/log.js';
import { createStore } from '../../src/db/index.js';
import { request } from '../helpers/http.js';
import { freePort } from '../helpers/nats-server.js';
import { spawnService } from '../helpers/service-process.js';
import { seedEmbeddedDataDir } from '../helpers/pglite-template.js';

function tempDir(t: { after(fn: () => unknown): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'ass-pglite-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Runs `work` while a 10 ms interval ticks; returns its duration and the longest gap between ticks. */
async function timeLoopGaps(work: () => Promise<unknown>): Promise<{ durationMs: number; maxGapMs: number }> {
  let last = performance.now();
  let maxGapMs = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    maxGapMs = Math.max(maxGapMs, now - last);
    last = now;
  }, 10);
  const started = performance.now();
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  return { durationMs: performance.now() - started, maxGapMs: Math.max(maxGapMs, performance.now() - last) };
}

/** A data directory with the database already created (test/helpers/pglite-template.ts); the last test creates its own. */
async function seededDir(t: { after(fn: () => unknown): void }): Promise<string> {
  const dir = tempDir(t);
  await seedEmbeddedDataDir(dir);
  return dir;
}

describe('embedded store (PGlite on its own thread)', () => {
  it('a long statement runs while the event loop keeps turning', async (t) => {
    const store = await createStore({ dataDir: await seededDir(t), log: createLogger('silent') });
    t.after(() => store.close());
    // Sized to take about a second on a quiet machine; the assertion is relative to what it took.
    const { durationMs, maxGapMs } = await timeLoopGaps(() =>
      store.sql('select count(*) as n from generate_series(1, 4000000) as g(x) where x % 7 = 0'),
    );
    assert.ok(durationMs >= 300, `the statement ran long enough to tell (${durationMs.toFixed(0)} ms)`);
    // In the request thread the whole statement was one blocked stretch of the loop.
    assert.ok(maxGapMs < durationMs / 3, `longest loop stall ${maxGapMs.toFixed(0)} ms during a ${durationMs.toFixed(0)} ms statement`);
  });

  it('errors keep their SQLSTATE across the thread, and the connection stays usable', async (t) => {
    const store = await createStore({ dataDir: await seededDir(t), log: createLogger('silent') });
    t.after(() => store.close());
    await store.sql('create table t (k text primary key)');
    await store.sql('insert into t values (?)', ['a']);
    const sqlstate = (code: string) => (err: unknown) => (err as { code?: string }).code === code;
    await assert.rejects(store.sql('insert into t values (?)', ['a']), sqlstate('23505'));
    await assert.rejects(store.sql('select * from missing_table'), sqlstate('42P01'));
    // A failed transaction is rolled back, not left open to swallow the next statements.
    const em = store.em();
    await assert.rejects(
      em.transactional(async (tx) => {
        await tx.getConnection().execute('insert into t values (?)', ['b'], 'run', tx.getTransactionContext());
        await tx.getConnection().execute('insert into t values (?)', ['a'], 'run', tx.getTransactionContext());
      }),
      sqlstate('23505'),
    );
    assert.deepEqual(await store.sql<{ k: string }>('select k from t order by k'), [{ k: 'a' }]);
  });

  it('a restart after SIGTERM reads back what the first process wrote, and leaves no socket behind', async (t) => {
    const dataDir = tempDir(t);
    const key = 'test-admin-key-0123456789abcdef';
    const env = async () => ({ PORT: String(await freePort()), DATA_DIR: dataDir, BOOTSTRAP_ADMIN_API_KEY: key });

    const firstEnv = await env();
    const first = spawnService(firstEnv, t);
    const firstUrl = `http://127.0.0.1:${firstEnv.PORT}`;
    await first.waitHealthy(firstUrl, 120_000);
    const agent = await request(firstUrl, 'POST', '/v1/agents', { key, body: { name: 'kept', system_prompt: 'p' } });
    assert.equal(agent.status, 201);
    const session = await request(firstUrl, 'POST', '/v1/sessions', { key, body: { agent_id: agent.body.id } });
    assert.equal(session.status, 201);
    first.proc.kill('SIGTERM');
    assert.equal(await first.exited, 0, first.output().slice(-2000));
    assert.ok(!first.output().includes('"level":50'), `no error logged while stopping:\n${first.output().slice(-2000)}`);
    assert.ok(!existsSync(join(dataDir, '.s.PGSQL.5432')), `the socket is removed: ${readdirSync(dataDir).join(', ')}`);

    const secondEnv = await env();
    const second = spawnService(secondEnv, t);
    const secondUrl = `http://127.0.0.1:${secondEnv.PORT}`;
    await second.waitHealthy(secondUrl, 120_000);
    const again = await request(secondUrl, 'GET', `/v1/agents/${agent.body.id}`, { key });
    assert.equal(again.status, 200);
    assert.equal(again.body.name, 'kept');
    assert.equal((await request(secondUrl, 'GET', `/v1/sessions/${session.body.id}`, { key })).status, 200);
    await second.stop();
  });
});
