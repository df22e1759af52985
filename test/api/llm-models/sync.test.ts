import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LlmProviderType } from '../../../src/llm/index.js';
import { startFakeAnthropic } from '../../llm/fakes/anthropic.js';
import type { FakeLlmServer, FakeModel } from '../../llm/fakes/fake-server.js';
import { startFakeGemini } from '../../llm/fakes/gemini.js';
import { startFakeOpenAi } from '../../llm/fakes/openai.js';
import { addModel, createOtherOrg, createProvider, useSuiteApp } from '../llm-providers/helpers.js';

const FAKE_KEY = 'test-key';

interface Vendor {
  type: Exclude<LlmProviderType, 'llmsim'>;
  fake: () => FakeLlmServer;
  /** The vendor reports display names (OpenAI lists ids only). */
  names: boolean;
}

describe('llm models: sync-models through the SDKs against fake vendors (postgres)', () => {
  // Each fake serves this list; tests edit it between syncs.
  const listed: Record<string, FakeModel[]> = { openai: [], anthropic: [], gemini: [] };
  let openai: FakeLlmServer;
  let anthropic: FakeLlmServer;
  let gemini: FakeLlmServer;
  before(async () => {
    openai = await startFakeOpenAi({ api_key: FAKE_KEY, models: listed['openai'] });
    anthropic = await startFakeAnthropic({ api_key: FAKE_KEY, models: listed['anthropic'] });
    gemini = await startFakeGemini({ api_key: FAKE_KEY, models: listed['gemini'] });
  });
  after(async () => Promise.all([openai.close(), anthropic.close(), gemini.close()]));
  const app = useSuiteApp(() => ({
    appOptions: {
      llmSyncBaseUrlOverride: {
        openai: `${openai.origin}/v1`,
        openai_completions: `${openai.origin}/v1`,
        anthropic: anthropic.origin,
        gemini: gemini.origin,
      },
    },
  }));

  const vendors: Vendor[] = [
    { type: 'openai', fake: () => openai, names: false },
    { type: 'openai_completions', fake: () => openai, names: false },
    { type: 'anthropic', fake: () => anthropic, names: true },
    { type: 'gemini', fake: () => gemini, names: true },
  ];

  for (const vendor of vendors) {
    it(`POST /v1/llm-providers/{id}/sync-models - ${vendor.type}: creates, keeps, marks stale, revives`, async () => {
      const models = listed[vendor.type === 'openai_completions' ? 'openai' : vendor.type]!;
      models.splice(
        0,
        models.length,
        { id: 'model-a', display_name: 'Model A' },
        { id: 'model-b', display_name: 'Model B' },
        { id: 'model-c', display_name: 'Model C' },
      );
      const p = await createProvider(app(), { name: vendor.type, provider_type: vendor.type, api_key: FAKE_KEY });
      const manual = await addModel(app(), p['id'], { model_id: 'private-finetune' });
      const sync = async () => {
        const r = await app().request('POST', `/v1/llm-providers/${p['id']}/sync-models`);
        assert.equal(r.status, 200, r.text);
        return r.body;
      };
      const byModelId = async () => {
        const r = await app().request('GET', `/v1/llm-providers/${p['id']}/models`);
        return Object.fromEntries(r.body.data.map((m: any) => [m.model_id, m]));
      };

      assert.deepEqual(await sync(), { status: 'success', created: 3, updated: 0, stale: 0 });
      const first = await byModelId();
      assert.deepEqual(Object.keys(first).sort(), ['model-a', 'model-b', 'model-c', 'private-finetune']);
      assert.deepEqual([first['model-a'].source, first['model-a'].status, first['model-a'].enabled], ['discovered', 'active', true]);
      assert.equal(first['model-b'].display_name, vendor.names ? 'Model B' : 'model-b');
      assert.ok((await app().request('GET', `/v1/llm-providers/${p['id']}`)).body.last_synced_at);
      assert.ok(
        vendor.fake().requests.some((r) => r.method === 'GET' && r.url.includes('models')),
        'listed through the vendor API',
      );

      assert.deepEqual(await sync(), { status: 'success', created: 0, updated: 0, stale: 0 });

      models.splice(2, 1);
      models[1] = { id: 'model-b', display_name: 'Model B v2' };
      assert.deepEqual(await sync(), { status: 'success', created: 0, updated: vendor.names ? 1 : 0, stale: 1 });
      const second = await byModelId();
      assert.deepEqual([second['model-c'].status, second['model-c'].id], ['stale', first['model-c'].id], 'kept, marked stale');
      assert.equal(second['private-finetune'].status, 'active', 'manual models are never marked stale');
      assert.equal(second['private-finetune'].id, manual['id']);
      if (vendor.names) assert.equal(second['model-b'].display_name, 'Model B v2');
      assert.equal((await app().request('GET', `/v1/llm-models?provider_id=${p['id']}&status=stale`)).body.total, 1);

      models.push({ id: 'model-c', display_name: 'Model C' }, { id: 'model-d', display_name: 'Model D' });
      assert.deepEqual(await sync(), { status: 'success', created: 1, updated: 1, stale: 0 });
      assert.equal((await byModelId())['model-c'].status, 'active');
    });
  }

  it('POST /v1/llm-providers/{id}/sync-models - not_supported for a custom base_url, without calling anyone', async () => {
    const before = openai.requests.length;
    const p = await createProvider(app(), { provider_type: 'openai_completions', api_key: FAKE_KEY, base_url: `${openai.origin}/v1` });
    const r = await app().request('POST', `/v1/llm-providers/${p['id']}/sync-models`);
    assert.deepEqual([r.status, r.body], [200, { status: 'not_supported' }]);
    assert.equal(openai.requests.length, before);
    assert.equal((await app().request('GET', `/v1/llm-providers/${p['id']}/models`)).body.total, 0);
  });

  it('POST /v1/llm-providers/{id}/sync-models - llmsim lists its one model; a rejected key is 422; other org 403', async () => {
    const sim = await createProvider(app(), { provider_type: 'llmsim' });
    assert.deepEqual((await app().request('POST', `/v1/llm-providers/${sim['id']}/sync-models`)).body, {
      status: 'success',
      created: 1,
      updated: 0,
      stale: 0,
    });
    assert.deepEqual(
      (await app().request('GET', `/v1/llm-providers/${sim['id']}/models`)).body.data.map((m: any) => m.model_id),
      ['llmsim'],
    );

    const wrong = await createProvider(app(), { provider_type: 'anthropic', api_key: 'not-the-fake-key' });
    const r = await app().request('POST', `/v1/llm-providers/${wrong['id']}/sync-models`);
    assert.equal(r.status, 422, r.text);
    assert.equal(r.body.error, 'Model sync failed: LLM provider rejected the credentials');
    assert.ok(!app().logs.join('').includes('not-the-fake-key'));

    const other = await createOtherOrg(app());
    assert.equal((await other.request('POST', `/v1/llm-providers/${sim['id']}/sync-models`)).status, 403);
  });
});
