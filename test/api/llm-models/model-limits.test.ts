import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { effectiveLimits, familyLimits } from '../../../src/llm/index.js';
import { startFakeAnthropic } from '../../llm/fakes/anthropic.js';
import type { FakeLlmServer, FakeModel } from '../../llm/fakes/fake-server.js';
import { startFakeGemini } from '../../llm/fakes/gemini.js';
import { addModel, createProvider, useSuiteApp } from '../llm-providers/helpers.js';

const FAKE_KEY = 'test-key';

describe('model limits: family defaults', () => {
  it('the longest matching family wins; unknown families have none', () => {
    assert.equal(familyLimits('gpt-4o-mini-2024-07-18')?.context_window, 128_000);
    assert.equal(familyLimits('gpt-4-0613')?.context_window, 8_192);
    assert.equal(familyLimits('claude-3-5-sonnet-latest')?.max_output_tokens, 8_192);
    assert.equal(familyLimits('models/gemini-2.5-flash')?.context_window, 1_048_576);
    assert.equal(familyLimits('my-finetune'), null);
  });
  it("a record's own values win over the family's", () => {
    assert.deepEqual(effectiveLimits('gpt-4o', { context_window: 5000, max_output_tokens: null }), {
      context_window: 5000,
      max_output_tokens: 16_384,
    });
    assert.deepEqual(effectiveLimits('x', {}), { context_window: null, max_output_tokens: null });
  });
});

describe('model limits: records, sync and the API (postgres)', () => {
  const listed: Record<string, FakeModel[]> = { anthropic: [], gemini: [] };
  let anthropic: FakeLlmServer;
  let gemini: FakeLlmServer;
  before(async () => {
    anthropic = await startFakeAnthropic({ api_key: FAKE_KEY, models: listed['anthropic'] });
    gemini = await startFakeGemini({ api_key: FAKE_KEY, models: listed['gemini'] });
  });
  after(async () => Promise.all([anthropic.close(), gemini.close()]));
  const app = useSuiteApp(() => ({
    appOptions: { llmSyncBaseUrlOverride: { anthropic: anthropic.origin, gemini: gemini.origin } },
  }));

  it('a manual model stores its limits; PATCH null goes back to the family default', async () => {
    const p = await createProvider(app(), { provider_type: 'openai', api_key: FAKE_KEY });
    const m = await addModel(app(), p['id'], { model_id: 'gpt-4o', context_window: 4096, max_output_tokens: 512 });
    assert.equal(m['context_window'], 4096);
    assert.equal(m['max_output_tokens'], 512);
    const reset = await app().request('PATCH', `/v1/llm-models/${m['id']}`, { body: { context_window: null } });
    assert.equal(reset.status, 200, reset.text);
    assert.equal(reset.body['context_window'], 128_000);
    assert.equal(reset.body['max_output_tokens'], 512);
    const unknown = await addModel(app(), p['id'], { model_id: 'house-model' });
    assert.equal(unknown['context_window'], null);
    const bad = await app().request('POST', `/v1/llm-providers/${p['id']}/models`, { body: { model_id: 'tiny', context_window: 3 } });
    assert.equal(bad.status, 400, bad.text);
  });

  for (const vendor of ['anthropic', 'gemini'] as const) {
    it(`sync fills the limits the ${vendor} listing states; a manual model's own values win`, async () => {
      listed[vendor]!.splice(
        0,
        Infinity,
        { id: 'listed-a', display_name: 'A', input_limit: 32_000, output_limit: 2_000 },
        { id: 'mine', display_name: 'M', input_limit: 9_000 },
      );
      const p = await createProvider(app(), { name: vendor, provider_type: vendor, api_key: FAKE_KEY });
      const manual = await addModel(app(), p['id'], { model_id: 'mine', context_window: 7_000 });
      const sync = await app().request('POST', `/v1/llm-providers/${p['id']}/sync-models`);
      assert.equal(sync.status, 200, sync.text);
      const list = await app().request('GET', `/v1/llm-models?provider_id=${p['id']}`);
      const byId = new Map((list.body['data'] as Record<string, any>[]).map((m) => [m['model_id'], m]));
      assert.equal(byId.get('listed-a')?.['context_window'], 32_000);
      assert.equal(byId.get('listed-a')?.['max_output_tokens'], 2_000);
      assert.equal(byId.get('mine')?.['id'], manual['id']);
      assert.equal(byId.get('mine')?.['context_window'], 7_000);
    });
  }
});
