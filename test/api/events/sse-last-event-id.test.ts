import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestApp } from '../../helpers/app.js';
import { openSse } from '../../helpers/sse-client.js';
import { newSession, isStored } from './helpers.js';
import { rawLog } from '../../helpers/raw-log.js';

describe('SSE resume: Last-Event-ID wins over ?since_id', () => {
  it('replays strictly after the header id when both are given', async (t) => {
    const app = await startTestApp(t, { mode: 'pglite' });
    const sid = await newSession(app);
    const appended = await rawLog(app.app.services.bus.events).append(sid, [
      { type: 'session.started' },
      { type: 'session.activated' },
      { type: 'session.idled' },
    ]);
    assert.ok(appended.ok);
    const [first, second, third] = appended.events;
    const s = await openSse(`${app.url}/v1/sessions/${sid}/sse?since_id=${first!.id}`, {
      key: app.adminKey,
      headers: { 'last-event-id': second!.id },
    });
    t.after(() => s.close());
    assert.equal(s.status, 200);
    await rawLog(app.app.services.bus.events).append(sid, [{ type: 'session.activated' }]);
    const got = await s.waitFor(isStored, 2);
    assert.deepEqual(
      got.map((e) => e.id),
      [third!.id, got[1]!.id],
    );
    assert.equal(JSON.parse(got[1]!.data).sequence, third!.sequence + 1);
    await sleep(150); // nothing replayed late either
    assert.equal(s.events.filter(isStored).length, 2);
  });

  it('an EventSource-like client (fixed ?since_id URL, Last-Event-ID on reconnect) sees each event once across cycles', async (t) => {
    const app = await startTestApp(t, { mode: 'pglite', env: { SSE_CYCLE_MS: 300, SSE_CYCLE_QUIET_MS: 0 } });
    const sid = await newSession(app);
    const start = await rawLog(app.app.services.bus.events).append(sid, [{ type: 'session.started' }]);
    assert.ok(start.ok);
    const url = `${app.url}/v1/sessions/${sid}/sse?since_id=${start.events[0]!.id}`;
    const seen: string[] = [];
    let lastId: string | undefined;
    for (let cycle = 0; cycle < 3; cycle++) {
      await rawLog(app.app.services.bus.events).append(sid, [{ type: 'output.message.delta', data: { n: cycle } }]);
      const s = await openSse(url, { key: app.adminKey, headers: lastId ? { 'last-event-id': lastId } : {} });
      assert.equal(s.status, 200);
      await s.done; // the server cycles the connection (`disconnecting`)
      assert.ok(
        s.events.some((e) => e.event === 'disconnecting'),
        `cycle ${cycle} ended by the server`,
      );
      for (const e of s.events.filter(isStored)) seen.push(e.id!);
      lastId = seen.at(-1) ?? lastId;
    }
    assert.equal(seen.length, 3, `each delta once: ${seen.join(',')}`);
    assert.equal(new Set(seen).size, 3);
  });
});
