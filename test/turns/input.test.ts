import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { createSession, getSession, listEvents, sendMessage, waitForEvent, watch } from './helpers.js';

const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a5b1d3e70000000049454e44ae426082',
  'hex',
);

async function uploadImage(app: TestApp, sessionId: string): Promise<string> {
  const fd = new FormData();
  fd.append('session_id', sessionId);
  fd.append('file', new Blob([PNG], { type: 'image/png' }), 'dot.png');
  const res = await fetch(`${app.url}/v1/images`, { method: 'POST', body: fd, headers: { authorization: `Bearer ${app.adminKey}` } });
  assert.equal(res.status, 201, await res.clone().text());
  return ((await res.json()) as { id: string }).id;
}

function post(app: TestApp, id: string, body: unknown) {
  return app.request('POST', `/v1/sessions/${id}/messages`, { body });
}

describe('turns: message input (postgres)', () => {
  it('POST messages - 400 for malformed bodies, 404 for unknown sessions and images; nothing appended', async (t) => {
    const app = await startTestApp(t);
    const { id } = await createSession(app);
    for (const body of [
      {},
      { message: {} },
      { message: { content: [] } },
      { message: { content: [{ type: 'text' }] } },
      { message: { content: [{ type: 'audio', data: 'x' }] } },
      { message: { content: [{ type: 'text', text: 'x' }], controls: { max_tokens: 0 } } },
      { message: { content: [{ type: 'text', text: 'x' }], controls: { reasoning_effort: 'extreme' } } },
      { message: { content: [{ type: 'text', text: 'x' }], controls: { unknown: 1 } } },
    ]) {
      const r = await post(app, id, body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.body.status, 400);
    }
    const noImage = await post(app, id, {
      message: { content: [{ type: 'image_file', image_id: 'img_00000000000000000000000000000000' }] },
    });
    assert.equal(noImage.status, 404);
    assert.equal((await sendMessage(app, '0190e0a0-0000-7000-8000-000000000000', 'x')).status, 404);
    const events = await listEvents(app, id);
    assert.deepEqual(
      events.map((e) => e.type),
      ['session.created'],
    );
    assert.equal((await getSession(app, id)).status, 'started');
  });

  it('an uploaded image goes to the model (llmsim counts it); the stored part keeps image_id and filename', async (t) => {
    const app = await startTestApp(t);
    const { id } = await createSession(app);
    const imageId = await uploadImage(app, id);
    const sse = await watch(app, id);
    t.after(() => sse.close());
    const r = await post(app, id, {
      message: {
        content: [
          { type: 'text', text: 'what is this' },
          { type: 'image_file', image_id: imageId, filename: 'dot.png' },
        ],
      },
    });
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(r.body.content[1], { type: 'image_file', image_id: imageId, filename: 'dot.png' });
    const events = await sse.until('session.idled');
    assert.equal(events.find((e) => e.type === 'output.message.completed')!.data['message'].content[0].text, 'what is this [1 image]');
  });

  it('storage tools run against the session storage (kv_store round trip across turns)', async (t) => {
    const app = await startTestApp(t);
    const { id } = await createSession(app, { capabilities: ['session_storage'] });
    const sse = await watch(app, id);
    t.after(() => sse.close());
    assert.equal((await sendMessage(app, id, '@tool kv_store {"operation":"set","key":"colour","value":"blue"}')).status, 201);
    await sse.until('session.idled');
    assert.equal((await sendMessage(app, id, '@tool kv_store {"operation":"get","key":"colour"}')).status, 201);
    const events = await sse.until('session.idled', 2);
    const got = events.filter((e) => e.type === 'tool.completed').at(-1)!;
    assert.equal(got.data['success'], true, JSON.stringify(got.data));
    assert.match(got.data['result'][0].text, /"value": "blue"/);
  });

  it('DELETE of a session mid-turn: the worker lets go, other sessions keep working', async (t) => {
    const app = await startTestApp(t);
    const { id } = await createSession(app);
    const sse = await watch(app, id);
    t.after(() => sse.close());
    assert.equal((await sendMessage(app, id, '@tokens 200 delay=20')).status, 201);
    await sse.until('output.message.delta');
    assert.equal((await app.request('DELETE', `/v1/sessions/${id}`)).status, 204);
    assert.equal((await app.request('GET', `/v1/sessions/${id}/events`)).status, 404);
    const other = await createSession(app);
    assert.equal((await sendMessage(app, other.id, 'still here')).status, 201);
    await waitForEvent(app, other.id, 'session.idled');
    assert.equal(
      app.logs.some((l) => l.includes('"level":50')),
      false,
      'no error was logged',
    );
  });
});
