/**
 * Compaction settings per agent and per session (issue 26 item 1; docs/decisions/0103):
 * `compaction: {threshold_percent, model_id}` on agent create/update and session create/PATCH,
 * checked (400 shape, 422 past the operator's COMPACTION_THRESHOLD_PERCENT, 404 a model the
 * organisation does not have), then used by the turn: the session's threshold over its agent's,
 * and the summary written by the configured model on another vendor.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startFakeAnthropic } from '../llm/fakes/anthropic.js';
import type { FakeLlmServer, RecordedRequest } from '../llm/fakes/fake-server.js';
import { startFakeOpenAi } from '../llm/fakes/openai.js';
import { addModel, createProvider } from '../api/llm-providers/helpers.js';
import { createOrgWithAdmin } from '../api/auth/helpers.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { createAgent, sendMessage, waitForEvent } from './helpers.js';

const KEY = 'test-key';
const isCompaction = (r: RecordedRequest) => JSON.stringify(r.body ?? '').includes('You compact the history');

async function openAiModel(app: TestApp, fake: FakeLlmServer, body: Record<string, unknown> = {}): Promise<string> {
  const p = await createProvider(app, { provider_type: 'openai', api_key: KEY, base_url: `${fake.origin}/v1` });
  return (await addModel(app, p['id'], { model_id: 'gpt-4o', ...body }))['id'];
}

describe('compaction settings: what agents and sessions accept (postgres, COMPACTION_THRESHOLD_PERCENT=60)', () => {
  let fake: FakeLlmServer;
  before(async () => {
    fake = await startFakeOpenAi({ api_key: KEY });
  });
  after(() => fake.close());

  it('agents: stored and shown; 400 bad shapes, 422 past the operator, 404 an unknown or foreign model; PATCH replaces, null clears', async (t) => {
    const app = await startTestApp(t, { mode: 'postgres', env: { COMPACTION_THRESHOLD_PERCENT: 60 } });
    const model = await openAiModel(app, fake);
    const other = await createOrgWithAdmin(app, 'Other');
    const p2 = await app.request('POST', '/v1/llm-providers', {
      key: other.key,
      body: { name: 'P2', provider_type: 'llmsim', api_key: 'k' },
    });
    const foreign = (await app.request('POST', `/v1/llm-providers/${p2.body.id}/models`, { key: other.key, body: { model_id: 'x' } })).body
      .id;
    assert.ok(foreign);

    const create = (compaction: unknown) =>
      app.request('POST', '/v1/agents', { body: { name: 'a', system_prompt: 'You help.', compaction } });
    for (const bad of [
      { threshold_percent: 5 },
      { threshold_percent: 101 },
      { threshold_percent: 50.5 },
      { model_id: 'gpt' },
      { other: 1 },
      7,
    ]) {
      const r = await create(bad);
      assert.equal(r.status, 400, `${JSON.stringify(bad)}: ${r.text}`);
    }
    const lifted = await create({ threshold_percent: 70 });
    assert.equal(lifted.status, 422, lifted.text);
    assert.match(lifted.body.error, /at most 60/);
    for (const id of [foreign, '019a0000-0000-7000-8000-000000000099']) {
      const r = await create({ model_id: id });
      assert.equal(r.status, 404, r.text);
      assert.match(r.body.error, /compaction\.model_id/);
    }
    assert.equal((await app.request('GET', '/v1/agents')).body.data.length, 0, 'refused creates store nothing');

    const ok = await create({ threshold_percent: 60, model_id: model.toUpperCase() });
    assert.equal(ok.status, 201, ok.text);
    assert.deepEqual(ok.body.compaction, { threshold_percent: 60, model_id: model });
    const id = ok.body.id;
    const renamed = await app.request('PATCH', `/v1/agents/${id}`, { body: { name: 'b' } });
    assert.deepEqual(renamed.body.compaction, { threshold_percent: 60, model_id: model }, 'a PATCH of another field keeps them');
    const lowered = await app.request('PATCH', `/v1/agents/${id}`, { body: { compaction: { threshold_percent: 30 } } });
    assert.deepEqual(lowered.body.compaction, { threshold_percent: 30 }, 'PATCH replaces the object');
    assert.equal((await app.request('PATCH', `/v1/agents/${id}`, { body: { compaction: { threshold_percent: 61 } } })).status, 422);
    const exported = await app.request('GET', `/v1/agents/${id}/export`);
    assert.match(exported.text, /compaction:\s+threshold_percent: 30/, 'the export carries them');
    const cleared = await app.request('PATCH', `/v1/agents/${id}`, { body: { compaction: null } });
    assert.equal(cleared.body.compaction, null);
  });

  it('sessions: create and PATCH checked the same way; PATCH null removes them', async (t) => {
    const app = await startTestApp(t, { mode: 'postgres', env: { COMPACTION_THRESHOLD_PERCENT: 60 } });
    const model = await openAiModel(app, fake);
    const agentId = await createAgent(app, { default_model_id: model });
    const create = (compaction: unknown) => app.request('POST', '/v1/sessions', { body: { agent_id: agentId, compaction } });
    assert.equal((await create({ threshold_percent: 9 })).status, 400);
    assert.equal((await create({ threshold_percent: 61 })).status, 422);
    assert.equal((await create({ model_id: '019a0000-0000-7000-8000-000000000099' })).status, 404);
    const s = await create({ threshold_percent: 40, model_id: model });
    assert.equal(s.status, 201, s.text);
    const patch = (compaction: unknown) => app.request('PATCH', `/v1/sessions/${s.body.id}`, { body: { compaction } });
    assert.equal((await patch({ threshold_percent: 200 })).status, 400);
    assert.equal((await patch({ threshold_percent: 61 })).status, 422);
    assert.equal((await patch({ model_id: '019a0000-0000-7000-8000-000000000099' })).status, 404);
    assert.equal((await patch({ threshold_percent: 20 })).status, 200);
    assert.equal((await patch(null)).status, 200);
  });
});

describe('compaction settings in the turn (pglite)', () => {
  let openai: FakeLlmServer;
  let anthropic: FakeLlmServer;
  before(async () => {
    openai = await startFakeOpenAi({ api_key: KEY });
    anthropic = await startFakeAnthropic({ api_key: KEY, respond: () => ({ type: 'reply', reply: { text: ['SUMMARY-BY-CLAUDE'] } }) });
  });
  after(() => Promise.all([openai.close(), anthropic.close()]));

  it("a session's threshold (PATCH) over its agent's compacts a history the default would keep; the configured model writes the summary", async (t) => {
    const app = await startTestApp(t, { mode: 'pglite' });
    const model = await openAiModel(app, openai, { context_window: 4_000 });
    const p = await createProvider(app, { provider_type: 'anthropic', api_key: KEY, base_url: anthropic.origin });
    const summariser = (await addModel(app, p['id'], { model_id: 'claude-haiku-4-5' }))['id'];
    const agentId = await createAgent(app, { default_model_id: model, compaction: { threshold_percent: 80 } });
    const s = await app.request('POST', '/v1/sessions', { body: { agent_id: agentId, compaction: { model_id: summariser } } });
    assert.equal(s.status, 201, s.text);
    const id: string = s.body.id;
    const note = (n: number) => `s${n}marker ${'a note of some length '.repeat(60)}`;
    for (let n = 1; n <= 3; n++) {
      assert.equal((await sendMessage(app, id, note(n))).status, 201);
      const events = await waitForEvent(app, id, 'session.idled', { n });
      assert.ok(!events.some((e) => e.type === 'session.compacted'), 'under 80 % of the window: no compaction');
    }
    const patched = await app.request('PATCH', `/v1/sessions/${id}`, {
      body: { compaction: { threshold_percent: 15, model_id: summariser } },
    });
    assert.equal(patched.status, 200, patched.text);
    assert.equal((await sendMessage(app, id, note(4))).status, 201);
    const events = await waitForEvent(app, id, 'session.idled', { n: 4 });
    const compacted = events.find((e) => e.type === 'session.compacted');
    assert.ok(compacted, 'the session’s 15 % compacts the same history');
    assert.equal(compacted.data['reason'], 'threshold');
    assert.equal(compacted.data['summary'], 'SUMMARY-BY-CLAUDE');
    assert.equal(compacted.data['model'], 'claude-haiku-4-5');
    assert.equal(compacted.data['model_id'], summariser);
    assert.ok(anthropic.requests.some(isCompaction), 'the summary was asked of the configured model');
    assert.ok(!openai.requests.some(isCompaction), "not of the session's own");
    assert.match(JSON.stringify(openai.requests.at(-1)!.body), /SUMMARY-BY-CLAUDE/, 'the next step starts from it');
  });
});
