import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startTestApp, type TestApp } from '../../helpers/app.js';

async function createAgent(app: TestApp, name = 'helper'): Promise<string> {
  const r = await app.request('POST', '/v1/agents', { body: { name, system_prompt: 'You help.' } });
  assert.equal(r.status, 201, r.text);
  return r.body.id;
}

for (const mode of ['postgres', 'pglite'] as const) {
  describe(`sessions (${mode})`, () => {
    it('POST /v1/sessions - needs harness_id or agent_id, starts in `started` with session.created first', async (t) => {
      const app = await startTestApp(t, { mode });
      const none = await app.request('POST', '/v1/sessions', { body: { title: 'x' } });
      assert.equal(none.status, 400);
      assert.equal(none.body.status, 400);

      const agentId = await createAgent(app);
      const r = await app.request('POST', '/v1/sessions', {
        body: { agent_id: agentId, title: 'T', tags: ['a'], capabilities: ['current_time'] },
      });
      assert.equal(r.status, 201, r.text);
      assert.equal(r.body.status, 'started');
      assert.equal(r.body.agent_id, agentId);
      assert.deepEqual(r.body.tags, ['a']);
      assert.deepEqual(r.body.capabilities, [{ ref: 'current_time', config: {} }]);
      assert.ok(Array.isArray(r.body.features));

      const events = await app.request('GET', `/v1/sessions/${r.body.id}/events`);
      assert.equal(events.status, 200);
      assert.equal(events.body.data[0].type, 'session.created');
      assert.equal(events.body.data[0].sequence, 1);
      assert.equal(events.body.data[0].session_id, r.body.id);
    });

    it('POST /v1/sessions - unknown agent 404, unknown capability 422, archived agent refused', async (t) => {
      const app = await startTestApp(t, { mode });
      assert.equal((await app.request('POST', '/v1/sessions', { body: { agent_id: '0190e0a0-0000-7000-8000-000000000000' } })).status, 404);
      const agentId = await createAgent(app);
      assert.equal((await app.request('POST', '/v1/sessions', { body: { agent_id: agentId, capabilities: ['no_such_cap'] } })).status, 422);
      assert.equal((await app.request('DELETE', `/v1/agents/${agentId}`)).status, 204);
      const archived = await app.request('POST', '/v1/sessions', { body: { agent_id: agentId } });
      assert.ok(archived.status >= 400 && archived.status < 500, `got ${archived.status}`);
    });
  });
}

describe('sessions (postgres)', () => {
  it('GET /v1/sessions - paginates with defaults, bounds and the agent_id filter', async (t) => {
    const app = await startTestApp(t);
    const a1 = await createAgent(app, 'one');
    const a2 = await createAgent(app, 'two');
    for (let i = 0; i < 23; i++) await app.request('POST', '/v1/sessions', { body: { agent_id: i < 3 ? a2 : a1 } });
    const page = await app.request('GET', '/v1/sessions');
    assert.equal(page.status, 200);
    assert.equal(page.body.total, 23);
    assert.equal(page.body.offset, 0);
    assert.equal(page.body.limit, 20);
    assert.equal(page.body.data.length, 20);
    const rest = await app.request('GET', '/v1/sessions?offset=20&limit=100');
    assert.equal(rest.body.data.length, 3);
    const ids = new Set([...page.body.data, ...rest.body.data].map((s: { id: string }) => s.id));
    assert.equal(ids.size, 23, 'pages do not overlap');
    const filtered = await app.request('GET', `/v1/sessions?agent_id=${a2}`);
    assert.equal(filtered.body.total, 3);
    for (const bad of ['limit=0', 'limit=101', 'offset=-1', 'limit=abc', 'agent_id=nope']) {
      const r = await app.request('GET', `/v1/sessions?${bad}`);
      assert.equal(r.status, 400, bad);
    }
  });

  it('PATCH /v1/sessions/:id - updates title, tags and agent; the new agent must be active', async (t) => {
    const app = await startTestApp(t);
    const a1 = await createAgent(app, 'one');
    const a2 = await createAgent(app, 'two');
    const s = (await app.request('POST', '/v1/sessions', { body: { agent_id: a1 } })).body;
    const r = await app.request('PATCH', `/v1/sessions/${s.id}`, { body: { title: 'New', tags: ['x', 'y'], agent_id: a2 } });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.title, 'New');
    assert.deepEqual(r.body.tags, ['x', 'y']);
    assert.equal(r.body.agent_id, a2);
    assert.equal(r.body.harness_id, s.harness_id, 'harness is immutable');
    await app.request('DELETE', `/v1/agents/${a1}`);
    const back = await app.request('PATCH', `/v1/sessions/${s.id}`, { body: { agent_id: a1 } });
    assert.ok(back.status >= 400 && back.status < 500);
    assert.equal((await app.request('GET', `/v1/sessions/${s.id}`)).body.agent_id, a2, 'nothing changed');
    assert.equal((await app.request('PATCH', `/v1/sessions/${s.id}`, { body: { status: 'idle' } })).status, 400);
  });

  it('DELETE /v1/sessions/:id - permanent: 404 afterwards, its events gone, other sessions untouched', async (t) => {
    const app = await startTestApp(t);
    const agentId = await createAgent(app);
    const keep = (await app.request('POST', '/v1/sessions', { body: { agent_id: agentId } })).body;
    const gone = (await app.request('POST', '/v1/sessions', { body: { agent_id: agentId } })).body;
    const bus = app.app.services.bus;
    await bus.events.append(gone.id, [{ type: 'session.started' }]);
    assert.equal((await app.request('DELETE', `/v1/sessions/${gone.id}`)).status, 204);
    assert.equal((await app.request('GET', `/v1/sessions/${gone.id}`)).status, 404);
    assert.equal((await app.request('DELETE', `/v1/sessions/${gone.id}`)).status, 404);
    assert.equal(await bus.events.lastSequence(gone.id), 0);
    assert.equal(await bus.events.lastSequence(keep.id), 1);
    assert.equal((await app.request('GET', `/v1/sessions/${keep.id}`)).status, 200);
  });

  it('POST /v1/sessions/chat - 20 concurrent calls create exactly one singleton, tagged for the user', async (t) => {
    const app = await startTestApp(t);
    const results = await Promise.all(Array.from({ length: 20 }, () => app.request('POST', '/v1/sessions/chat')));
    for (const r of results) assert.equal(r.status, 200, r.text);
    const ids = new Set(results.map((r) => r.body.id));
    assert.equal(ids.size, 1);
    const chat = results[0]!.body;
    assert.ok(chat.tags.includes('global-chat'));
    assert.ok(chat.tags.some((tag: string) => tag.startsWith('user:')));
    const events = await app.request('GET', `/v1/sessions/${chat.id}/events`);
    assert.deepEqual(
      events.body.data.map((e: { type: string }) => e.type),
      ['session.created'],
      'created once',
    );
    const harness = await app.request('GET', `/v1/harnesses/${chat.harness_id}`);
    assert.equal(harness.status, 200);
  });

  it('GET /v1/sessions/:id - unknown id 404, malformed id 400', async (t) => {
    const app = await startTestApp(t);
    assert.equal((await app.request('GET', '/v1/sessions/0190e0a0-0000-7000-8000-000000000000')).status, 404);
    assert.equal((await app.request('GET', '/v1/sessions/not-a-uuid')).status, 400);
  });
});
