/**
 * The session snapshot's background write (actors/session/log/snapshot-store.ts) against
 * PostgreSQL: a turn that ends while the session's previous snapshot is still being written
 * leaves its transcript to be written after it, so the stored snapshot reaches the session's
 * last turn without waiting for another one (CI, 2026-12-01: a slow write left it at the turn
 * before). Turns that end while one waits are superseded by the newest.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import pg from 'pg';
import { createSnapshotStore } from '../../actors/session/log/snapshot-store.js';
import { emptyTranscript, type Transcript } from '../../actors/session/log/transcript.js';
import { silentLog, storageFixture } from '../session-storage/helpers.js';

const at = (sequence: number): Transcript => ({ ...emptyTranscript(), sequence });

it('a turn ending during a slow snapshot write is written after it; the newest of those waiting wins', async (t) => {
  const { store, databaseUrl, session } = await storageFixture(t);
  const { id: sessionId } = await session();
  let writes = 0;
  const snapshots = createSnapshotStore(store, silentLog, { intervalEvents: 5 }, { snapshotWritten: () => void writes++ });
  const stored = async () =>
    (await store.sql<{ sequence: number }>('select sequence from session_snapshots where session_id = ?', [sessionId]))[0]?.sequence;

  // Another connection holds the table, so the first write waits in the database.
  const blocker = new pg.Client({ connectionString: databaseUrl });
  blocker.on('error', () => undefined); // ended by the fixture's database drop if an assertion fails first
  await blocker.connect();
  await blocker.query('begin; lock table session_snapshots in exclusive mode');

  assert.equal(snapshots.refresh(sessionId, at(13), 0), 13, 'the first turn writes');
  await new Promise((r) => setTimeout(r, 200)); // its write is in the database, waiting for the lock
  assert.equal(snapshots.refresh(sessionId, at(3), 0), 0, 'under the interval: nothing to write');
  assert.equal(snapshots.refresh(sessionId, at(24), 13), 24, 'a turn ending meanwhile will be stored');
  assert.equal(snapshots.refresh(sessionId, at(40), 24), 40, 'and a later one supersedes it');
  await blocker.query('commit');
  await blocker.end();

  const deadline = Date.now() + 10_000;
  while ((await stored()) !== 40) {
    assert.ok(Date.now() < deadline, `snapshot at ${await stored()}, not 40`);
    await new Promise((r) => setTimeout(r, 25));
  }
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(writes, 2, 'written at 13 and 40; 24 never');

  assert.equal(snapshots.refresh(sessionId, at(50), 40), 50, 'with no write in flight, the next one starts at once');
  while ((await stored()) !== 50) {
    assert.ok(Date.now() < deadline, `snapshot at ${await stored()}, not 50`);
    await new Promise((r) => setTimeout(r, 25));
  }
});
