import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LLMSIM_MODEL_UUID } from '../../../src/llm/index.js';
import { startTestApp } from '../../helpers/app.js';
import { createAgent, createSession, sendMessage, waitForEvent } from '../../turns/helpers.js';

const DISABLED = /built-in (model|provider)? ?llmsim.* not enabled on this service/;

describe('llmsim: an operator setting', () => {
  it('without LLMSIM_ENABLED every way of naming llmsim is refused with a clear 4xx, and nothing falls back to it', async (t) => {
    const app = await startTestApp(t, { mode: 'postgres', env: { LLMSIM_ENABLED: false } });
    const { id, agentId } = await createSession(app);

    const byControls = await sendMessage(app, id, '@tokens 100000 delay=1', { model_id: 'llmsim' });
    assert.equal(byControls.status, 404, byControls.text);
    assert.match(byControls.body.error, DISABLED);
    const byAgent = await app.request('POST', '/v1/agents', { body: { name: 'a', system_prompt: 'p', model: 'llmsim' } });
    assert.equal(byAgent.status, 404, byAgent.text);
    const byUuid = await app.request('POST', '/v1/agents', {
      body: { name: 'a', system_prompt: 'p', default_model_id: LLMSIM_MODEL_UUID },
    });
    assert.equal(byUuid.status, 404, byUuid.text);
    const bySession = await app.request('POST', '/v1/sessions', { body: { agent_id: agentId, model_id: 'llmsim' } });
    assert.equal(bySession.status, 404, bySession.text);
    // A tenant cannot reach it through a provider of its type either (the operator's setting is not theirs to lift).
    const provider = await app.request('POST', '/v1/llm-providers', { body: { name: 'sim', provider_type: 'llmsim', api_key: 'k' } });
    assert.equal(provider.status, 422, provider.text);
    assert.match(provider.body.error, DISABLED);

    assert.equal((await app.request('GET', '/v1/llm-models/default')).body.system_default, null);
    // No model anywhere: the turn fails instead of running the simulator.
    assert.equal((await sendMessage(app, id, 'hello')).status, 201);
    const events = await waitForEvent(app, id, 'session.idled');
    assert.ok(events.some((e) => e.type === 'turn.failed'));
    assert.equal(
      events.some((e) => e.type === 'output.message.started'),
      false,
    );
  });

  it('directives are bounded by LLMSIM_MAX_TOKENS and LLMSIM_MAX_WAIT_MS', async (t) => {
    const app = await startTestApp(t, { mode: 'postgres', env: { LLMSIM_MAX_TOKENS: 50, LLMSIM_MAX_WAIT_MS: 300 } });
    const { id } = await createSession(app);
    const started = Date.now();
    assert.equal((await sendMessage(app, id, '@sleep 100000\n@tokens 100000 delay=1000')).status, 201);
    const events = await waitForEvent(app, id, 'session.idled', { timeoutMs: 20_000 });
    assert.ok(Date.now() - started < 10_000, `the turn took ${Date.now() - started} ms`);
    const completed = events.find((e) => e.type === 'output.message.completed')!;
    assert.equal(completed.data['message'].content[0].text.split(' ').length, 50);
  });
});

describe('llmsim: nameable wherever a model is (issue 30 item 18)', () => {
  it('model "llmsim" on agent create (the TypeScript SDK\'s alias) and model_id "llmsim" on session create run the built-in model', async (t) => {
    const app = await startTestApp(t, { mode: 'postgres' });
    const agent = await app.request('POST', '/v1/agents', { body: { name: 'sim', system_prompt: 'p', model: 'llmsim' } });
    assert.equal(agent.status, 201, agent.text);
    assert.equal(agent.body.model, 'llmsim');
    assert.equal(agent.body.default_model_id, LLMSIM_MODEL_UUID);
    const session = await app.request('POST', '/v1/sessions', { body: { agent_id: agent.body.id } });
    assert.equal(session.status, 201, session.text);
    assert.equal((await sendMessage(app, session.body.id, 'hello there')).status, 201);
    const events = await waitForEvent(app, session.body.id, 'session.idled');
    const completed = events.find((e) => e.type === 'output.message.completed')!;
    assert.deepEqual(completed.data['metadata'], { model: 'llmsim', model_id: 'llmsim', provider_id: 'llmsim' });

    const agentId = await createAgent(app);
    const named = await app.request('POST', '/v1/sessions', { body: { agent_id: agentId, model_id: 'llmsim' } });
    assert.equal(named.status, 201, named.text);
    assert.equal(named.body.model_id, LLMSIM_MODEL_UUID);
    assert.equal((await sendMessage(app, named.body.id, 'hi')).status, 201);
    const done = await waitForEvent(app, named.body.id, 'session.idled');
    assert.ok(done.some((e) => e.type === 'turn.completed'));
  });
});
