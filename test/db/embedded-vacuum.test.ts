/**
 * The embedded database vacuums itself (src/db/embedded-vacuum.ts, docs/decisions/0107-embedded-vacuum.md):
 * PGlite has no autovacuum, so the rows turns update (`sessions`, `bus_turns`) kept every dead
 * version. Turns sent over HTTP leave dead rows; a round vacuums the tables past autovacuum's
 * threshold and not the append-only event log; the timer set by EMBEDDED_VACUUM_INTERVAL_MS runs
 * rounds on its own.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { createSession, getSession, sendMessage } from '../turns/helpers.js';

interface TableStats {
  relname: string;
  n_dead_tup: number;
  vacuum_count: number;
}

async function stats(app: TestApp, table: string): Promise<TableStats> {
  const [row] = await app.app.services.store.sql<TableStats>(
    'select relname, n_dead_tup::int as n_dead_tup, vacuum_count::int as vacuum_count from pg_stat_user_tables where relname = ?',
    [table],
  );
  assert.ok(row, `no statistics for ${table}`);
  return row;
}

async function turn(app: TestApp, sessionId: string, text: string): Promise<void> {
  const r = await sendMessage(app, sessionId, text);
  assert.equal(r.status, 201, r.text);
  const deadline = Date.now() + 20_000;
  while ((await getSession(app, sessionId)).status !== 'idle') {
    assert.ok(Date.now() < deadline, 'the turn did not end');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Turns until the session rows' dead versions pass autovacuum's threshold (50 + 20 % of the live rows). */
async function turnsUntilDeadRows(app: TestApp, sessionId: string): Promise<number> {
  for (let i = 0; i < 60; i++) {
    await turn(app, sessionId, `turn ${i}`);
    if ((await stats(app, 'sessions')).n_dead_tup > 60) return i + 1;
  }
  assert.fail(`sessions has ${(await stats(app, 'sessions')).n_dead_tup} dead rows after 60 turns`);
}

describe('embedded database vacuum', () => {
  it('turns leave dead rows; a round vacuums the tables past the threshold, not the event log', async (t) => {
    const app = await startTestApp(t, { mode: 'pglite', env: { EMBEDDED_VACUUM_INTERVAL_MS: 0 } });
    const vacuum = app.app.services.store.embeddedVacuum;
    assert.ok(vacuum, 'embedded mode has the vacuum');
    const { id } = await createSession(app);
    const turns = await turnsUntilDeadRows(app, id);
    const before = await stats(app, 'sessions');
    assert.equal(before.vacuum_count, 0, 'with the timer off nothing vacuumed');

    const vacuumed = await vacuum.round();
    assert.ok(vacuumed.includes('public.sessions'), `vacuumed ${vacuumed.join(', ')} after ${turns} turns`);
    assert.ok(!vacuumed.includes('public.bus_events'), 'the append-only event log is not vacuumed');
    const after = await stats(app, 'sessions');
    assert.equal(after.vacuum_count, 1);
    // Not exactly 0: statistics reach the counters up to a second after their statement (PostgreSQL
    // flushes them at most once a second), so updates of the last turn's end can land after the
    // vacuum reset the count (CI saw 3 of 61).
    assert.ok(after.n_dead_tup <= before.n_dead_tup / 10, `dead rows left: ${after.n_dead_tup} of ${before.n_dead_tup}`);
    assert.equal((await stats(app, 'bus_events')).vacuum_count, 0);

    // Below the threshold again: the next round has nothing to do.
    assert.deepEqual(await vacuum.round(), []);
    await turn(app, id, 'after the vacuum');
    assert.equal((await getSession(app, id)).status, 'idle');
  });

  it('EMBEDDED_VACUUM_INTERVAL_MS runs rounds on a timer', async (t) => {
    const app = await startTestApp(t, { mode: 'pglite', env: { EMBEDDED_VACUUM_INTERVAL_MS: 100 } });
    const { id } = await createSession(app);
    for (let i = 0; i < 40 && (await stats(app, 'sessions')).vacuum_count === 0; i++) await turn(app, id, `turn ${i}`);
    const deadline = Date.now() + 10_000;
    while ((await stats(app, 'sessions')).vacuum_count === 0) {
      assert.ok(Date.now() < deadline, 'the timer never vacuumed sessions');
      await new Promise((r) => setTimeout(r, 50));
    }
  });
});
