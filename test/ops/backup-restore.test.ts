import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { backup, restore } from '../../scripts/backup.js';
import { startTestApp } from '../helpers/app.js';
import { startNatsServer } from '../helpers/nats-server.js';
import { createTestDatabase } from '../helpers/postgres.js';
import { openSse } from '../helpers/sse-client.js';
import { createSession, listEvents, sendMessage, waitForEvent } from '../turns/helpers.js';

describe('runbook drill: backup and restore of PostgreSQL + JetStream together (scripts/backup.ts)', () => {
  it('write sessions, back up, wipe both stores, restore, resume a session from since_id with nothing lost, keep working', async (t) => {
    const nats = await startNatsServer({ t });
    const db = await createTestDatabase('backup_drill');
    t.after(() => db.drop());
    const settings = { databaseUrl: db.url, natsUrl: nats.url, natsAuth: nats.auth, log: (l: string) => t.diagnostic(l) };

    // Write: two sessions with a finished turn each.
    const before = await startTestApp(t, { mode: 'nats', databaseUrl: db.url, natsUrl: nats.url });
    const sessions = [await createSession(before), await createSession(before)];
    for (const [i, s] of sessions.entries()) {
      assert.equal((await sendMessage(before, s.id, `hello ${i}`)).status, 201);
      await waitForEvent(before, s.id, 'session.idled');
    }
    const eventsBefore = await Promise.all(sessions.map((s) => listEvents(before, s.id)));
    assert.ok(
      eventsBefore.every((e) => e.length >= 10),
      'each session has its turn in the log',
    );

    // Back up while the instance runs (nothing is being written at this moment).
    const dir = mkdtempSync(join(tmpdir(), 'ass-backup-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const { streams } = await backup(dir, settings);
    assert.ok(streams.some((s) => s.name === 'EVENTS_0') && streams.some((s) => s.name === 'TURNS'), streams.map((s) => s.name).join());
    assert.ok(readdirSync(dir).includes('postgres.dump'));

    // Wipe: the instance stops, the database is dropped, nats-server loses its store.
    await before.app.close();
    await db.drop();
    await nats.stop();
    rmSync(nats.storeDir, { recursive: true, force: true });
    await nats.restart();

    // Restore, then start an instance on the restored stores.
    await restore(dir, settings);
    const after = await startTestApp(t, { mode: 'nats', databaseUrl: db.url, natsUrl: nats.url });
    for (const [i, s] of sessions.entries()) {
      assert.deepEqual(await listEvents(after, s.id), eventsBefore[i], `session ${i}: every event back, same ids, same order`);
    }

    // A client that had seen up to the middle of session 0 resumes from there: exactly the rest.
    const log0 = eventsBefore[0]!;
    const mid = log0[Math.floor(log0.length / 2)]!;
    const sse = await openSse(`${after.url}/v1/sessions/${sessions[0]!.id}/sse?since_id=${mid.id}`, { key: after.adminKey });
    t.after(() => sse.close());
    assert.equal(sse.status, 200);
    const rest = log0.slice(log0.indexOf(mid) + 1).map((e) => e.id);
    await sse.waitFor((e) => e.id === rest.at(-1), 1, 15_000);
    const resumedIds = () => sse.events.filter((e) => e.id).map((e) => e.id);
    assert.deepEqual(resumedIds(), rest);

    // And the restored deployment keeps going: a new turn appends after the restored log.
    assert.equal((await sendMessage(after, sessions[0]!.id, 'after restore')).status, 201);
    await sse.waitFor((e) => e.event === 'session.idled', 2, 15_000);
    const final = await listEvents(after, sessions[0]!.id);
    assert.deepEqual(final.slice(0, log0.length), log0);
    assert.ok(final.length > log0.length);
    assert.deepEqual(
      resumedIds(),
      final.slice(log0.indexOf(mid) + 1).map((e) => e.id),
      'the stream carried on without a gap',
    );
  });
});
