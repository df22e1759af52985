import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { createAgent, createSession, sendMessage, watch } from './helpers.js';

/** A model row of the org backed by an `llmsim` provider, so model resolution is observable. */
async function createSimModel(app: TestApp): Promise<{ modelId: string; providerId: string }> {
  const p = await app.request('POST', '/v1/llm-providers', { body: { name: 'sim', provider_type: 'llmsim', api_key: 'sim-key-not-used' } });
  assert.equal(p.status, 201, p.text);
  const m = await app.request('POST', `/v1/llm-providers/${p.body.id}/models`, { body: { model_id: 'llmsim' } });
  assert.equal(m.status, 201, m.text);
  return { modelId: m.body.id, providerId: p.body.id };
}

const LONG_PROMPT = Array.from({ length: 60 }, (_, i) => `rule${i}`).join(' ');

for (const mode of ['postgres', 'nats'] as const) {
  describe(`turns: agent switch and model resolution (${mode})`, () => {
    it('after PATCH agent_id the next turn uses the new agent prompt, capabilities and default model; earlier turns unchanged', async (t) => {
      const app = await startTestApp(t, { mode });
      const { modelId, providerId } = await createSimModel(app);
      const { id } = await createSession(app, { system_prompt: 'Short.' });
      const agentB = await createAgent(app, { system_prompt: LONG_PROMPT, capabilities: ['current_time'], default_model_id: modelId });
      const sse = await watch(app, id);
      t.after(() => sse.close());

      assert.equal((await sendMessage(app, id, '@tool get_current_time {}')).status, 201);
      let events = await sse.until('session.idled');
      const first = events.find((e) => e.type === 'tool.completed')!;
      assert.equal(first.data['error'], 'Unknown tool: get_current_time', 'agent A has no current_time');
      const genA = events.find((e) => e.type === 'llm.generation')!;
      assert.deepEqual(events.find((e) => e.type === 'output.message.completed')!.data['metadata'], {
        model: 'llmsim',
        model_id: 'llmsim',
        provider_id: 'llmsim',
      });

      const patched = await app.request('PATCH', `/v1/sessions/${id}`, { body: { agent_id: agentB } });
      assert.equal(patched.status, 200, patched.text);

      assert.equal((await sendMessage(app, id, '@tool get_current_time {}')).status, 201);
      events = await sse.until('session.idled', 2);
      const turn2 = events.filter((e) => e.type === 'turn.started')[1]!.data['turn_id'];
      const second = events.filter((e) => e.type === 'tool.completed' && e.context['turn_id'] === turn2)[0]!;
      assert.equal(second.data['success'], true, 'agent B brings current_time');
      const out2 = events.find((e) => e.type === 'output.message.completed' && e.context['turn_id'] === turn2)!;
      assert.deepEqual(out2.data['metadata'], { model: 'llmsim', model_id: modelId, provider_id: providerId });
      const genB = events.find((e) => e.type === 'llm.generation' && e.context['turn_id'] === turn2)!;
      // llmsim counts prompt words: B's system prompt (60 words + capability instructions) replaced A's.
      assert.ok(
        genB.metadata!['usage'].input_tokens - genA.metadata!['usage'].input_tokens > 60,
        `${genA.metadata!['usage'].input_tokens} → ${genB.metadata!['usage'].input_tokens}`,
      );
    });

    it('model order: message controls > agent default; an unknown controls.model_id is 404 with nothing appended', async (t) => {
      const app = await startTestApp(t, { mode });
      const { modelId } = await createSimModel(app);
      const { id } = await createSession(app);
      const sse = await watch(app, id);
      t.after(() => sse.close());
      const missing = await sendMessage(app, id, 'x', { model_id: '0190e0a0-0000-7000-8000-000000000000' });
      assert.equal(missing.status, 404);
      const invalid = await sendMessage(app, id, 'x', { temperature: 3 });
      assert.equal(invalid.status, 400);
      const r = await sendMessage(app, id, 'hi', { model_id: modelId, max_tokens: 50, temperature: 0.2, reasoning_effort: 'high' });
      assert.equal(r.status, 201, r.text);
      assert.deepEqual(r.body.controls, { model_id: modelId, max_tokens: 50, temperature: 0.2, reasoning_effort: 'high' });
      const events = await sse.until('session.idled');
      assert.equal(events.filter((e) => e.type === 'input.message').length, 1);
      assert.equal(events.find((e) => e.type === 'output.message.completed')!.data['metadata'].model_id, modelId);
    });
  });
}
