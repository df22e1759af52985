import assert from 'node:assert/strict';
import { it } from 'node:test';
import { startTestApp } from '../../helpers/app.js';
import { openSse } from '../../helpers/sse-client.js';
import { createSession, listEvents, sendMessage, waitForEvent } from '../../turns/helpers.js';

it('events: an empty types filter means all types on the listing and SSE (spec 6.1); unknown types stay 400', async (t) => {
  const app = await startTestApp(t, { mode: 'postgres' });
  const { id } = await createSession(app);
  assert.equal((await sendMessage(app, id, 'hello')).status, 201);
  await waitForEvent(app, id, 'session.idled');
  const all = await listEvents(app, id);

  for (const query of ['types=', 'types=&exclude=', 'types=&types=']) {
    const r = await app.request('GET', `/v1/sessions/${id}/events?${query}`);
    assert.equal(r.status, 200, `${query}: ${r.text}`);
    assert.deepEqual(
      r.body.data.map((e: { id: string }) => e.id),
      all.map((e) => e.id),
      query,
    );
  }
  const narrowed = await app.request('GET', `/v1/sessions/${id}/events?types=&types=turn.started`);
  assert.deepEqual(
    narrowed.body.data.map((e: { type: string }) => e.type),
    ['turn.started'],
    'an empty value next to a type adds nothing',
  );
  assert.equal((await app.request('GET', `/v1/sessions/${id}/events?types=nope`)).status, 400);

  const sse = await openSse(`${app.url}/v1/sessions/${id}/sse?types=`, { key: app.adminKey });
  t.after(() => sse.close());
  assert.equal(sse.status, 200);
  await sse.waitFor((e) => e.event === 'session.idled');
  assert.equal(sse.events.filter((e) => e.event !== 'connected').length, all.length, 'every stored event is replayed');
  const bad = await openSse(`${app.url}/v1/sessions/${id}/sse?types=nope`, { key: app.adminKey });
  assert.equal(bad.status, 400);
});
