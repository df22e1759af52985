import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startFakeAnthropic } from '../../llm/fakes/anthropic.js';
import type { FakeLlmServer } from '../../llm/fakes/fake-server.js';
import { startFakeOpenAi } from '../../llm/fakes/openai.js';
import { createSession, sendMessage, waitForEvent } from '../../turns/helpers.js';
import { addModel, createProvider, fakeVendorKey, useSuiteApp } from '../llm-providers/helpers.js';

const VENDOR_KEY = fakeVendorKey('sk-e2e');

describe('llm models: a turn through a configured provider (postgres)', () => {
  let openai: FakeLlmServer;
  let anthropic: FakeLlmServer;
  before(async () => {
    openai = await startFakeOpenAi({ api_key: VENDOR_KEY });
    anthropic = await startFakeAnthropic({ api_key: VENDOR_KEY });
  });
  after(async () => Promise.all([openai.close(), anthropic.close()]));
  const app = useSuiteApp();

  const cases = [
    {
      type: 'openai_completions',
      fake: () => openai,
      baseUrl: () => `${openai.origin}/v1`,
      model: 'gpt-fake',
      path: '/v1/chat/completions',
    },
    { type: 'anthropic', fake: () => anthropic, baseUrl: () => anthropic.origin, model: 'claude-fake', path: '/v1/messages' },
  ] as const;

  for (const c of cases) {
    it(`${c.type} - output.message.completed carries {model, model_id, provider_id} and usage; llm.generation has usage`, async () => {
      const p = await createProvider(app(), { name: c.type, provider_type: c.type, api_key: VENDOR_KEY, base_url: c.baseUrl() });
      const m = await addModel(app(), p['id'], { model_id: c.model });
      c.fake().enqueue({
        type: 'reply',
        reply: { text: ['Hello', ' from ', c.type], usage: { input_tokens: 21, output_tokens: 4, cache_read_tokens: 0 } },
      });
      const session = await createSession(app(), { default_model_id: m['id'] });
      const sent = await sendMessage(app(), session.id, 'Say hello');
      assert.equal(sent.status, 201, sent.text);
      const events = await waitForEvent(app(), session.id, 'session.idled');

      const completed = events.find((e) => e.type === 'output.message.completed');
      assert.ok(completed, `no output.message.completed: ${events.map((e) => e.type).join(', ')}`);
      assert.deepEqual(completed.data['metadata'], { model: c.model, model_id: m['id'], provider_id: p['id'] });
      assert.deepEqual(
        { input: completed.data['usage'].input_tokens, output: completed.data['usage'].output_tokens },
        { input: 21, output: 4 },
      );
      assert.match(JSON.stringify(completed.data['message']), new RegExp(`Hello from ${c.type}`));
      const generation = events.find((e) => e.type === 'llm.generation')!;
      assert.equal(generation.metadata?.['usage']?.input_tokens ?? generation.data['usage']?.input_tokens, 21);
      assert.equal(events.find((e) => e.type === 'output.message.started')?.data['model'], c.model);
      assert.ok(!events.some((e) => e.type === 'turn.failed'));

      const call = c.fake().requests.findLast((r) => r.url.startsWith(c.path))!;
      assert.equal(call.body.model, c.model);
      assert.equal(call.headers['x-api-key'] ?? call.headers.authorization?.replace(/^Bearer /, ''), VENDOR_KEY);
      assert.ok(!JSON.stringify(events).includes(VENDOR_KEY), 'key in an event');
      assert.ok(!app().logs.join('').includes(VENDOR_KEY), 'key in a log line');
    });
  }

  it('session model_id wins over the agent default; message controls win over both', async () => {
    const p = await createProvider(app(), { provider_type: 'openai_completions', api_key: VENDOR_KEY, base_url: `${openai.origin}/v1` });
    const agentModel = await addModel(app(), p['id'], { model_id: 'agent-model' });
    const sessionModel = await addModel(app(), p['id'], { model_id: 'session-model' });
    const controlModel = await addModel(app(), p['id'], { model_id: 'control-model' });
    const session = await createSession(app(), { default_model_id: agentModel['id'] }, { model_id: sessionModel['id'] });
    assert.equal((await sendMessage(app(), session.id, 'one')).status, 201);
    let events = await waitForEvent(app(), session.id, 'session.idled');
    assert.equal(events.findLast((e) => e.type === 'output.message.completed')!.data['metadata'].model_id, sessionModel['id']);
    assert.equal((await sendMessage(app(), session.id, 'two', { model_id: controlModel['id'] })).status, 201);
    events = await waitForEvent(app(), session.id, 'session.idled', { n: 2 });
    assert.equal(events.findLast((e) => e.type === 'output.message.completed')!.data['metadata'].model, 'control-model');
  });

  it('a provider moved to another URL serves the next turn at once (the setup read brings the model and its provider)', async (t) => {
    const moved = await startFakeOpenAi({ api_key: VENDOR_KEY });
    t.after(() => moved.close());
    const p = await createProvider(app(), { provider_type: 'openai_completions', api_key: VENDOR_KEY, base_url: `${openai.origin}/v1` });
    const m = await addModel(app(), p['id'], { model_id: 'moving-model' });
    const session = await createSession(app(), { default_model_id: m['id'] });
    const calls = (fake: FakeLlmServer) => fake.requests.filter((r) => r.body?.model === 'moving-model').length;
    assert.equal((await sendMessage(app(), session.id, 'one')).status, 201);
    await waitForEvent(app(), session.id, 'session.idled');
    assert.equal(calls(openai), 1);
    const patched = await app().request('PATCH', `/v1/llm-providers/${p['id']}`, {
      body: { base_url: `${moved.origin}/v1`, api_key: VENDOR_KEY },
    });
    assert.equal(patched.status, 200, patched.text);
    assert.equal((await sendMessage(app(), session.id, 'two')).status, 201);
    const events = await waitForEvent(app(), session.id, 'session.idled', { n: 2 });
    assert.deepEqual(
      events.filter((e) => e.type === 'turn.failed').map((e) => e.data),
      [],
    );
    assert.deepEqual([calls(openai), calls(moved)], [1, 1], 'the second turn went to the new URL');
  });
});
