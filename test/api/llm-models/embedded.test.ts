import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { adminOrgId, createProvider, fakeVendorKey, useSuiteApp } from '../llm-providers/helpers.js';

describe('llm providers and models: embedded store (pglite)', () => {
  const app = useSuiteApp({ mode: 'pglite' });

  it('create, sync (row lock), duplicate 409, default, 409 on delete, delete cascades; the key is sealed', async () => {
    const apiKey = fakeVendorKey();
    const p = await createProvider(app(), { provider_type: 'llmsim', api_key: apiKey });
    assert.deepEqual((await app().request('POST', `/v1/llm-providers/${p['id']}/sync-models`)).body, {
      status: 'success',
      created: 1,
      updated: 0,
      stale: 0,
    });
    const [model] = (await app().request('GET', '/v1/llm-models')).body.data;
    assert.equal(model.model_id, 'llmsim');
    assert.equal((await app().request('POST', `/v1/llm-providers/${p['id']}/models`, { body: { model_id: 'llmsim' } })).status, 409);
    assert.equal((await app().request('PUT', '/v1/llm-models/default', { body: { model_id: model.id } })).status, 200);
    const resolved = await app().app.modules.llmModels.modelResolver.resolve(await adminOrgId(app()), null);
    assert.deepEqual([resolved.model_id, resolved.provider_id], [model.id, p['id']]);
    assert.equal((await app().request('DELETE', `/v1/llm-providers/${p['id']}`)).status, 409);
    assert.equal((await app().request('PUT', '/v1/llm-models/default', { body: { model_id: null } })).status, 200);
    assert.equal((await app().request('DELETE', `/v1/llm-providers/${p['id']}`)).status, 204);
    assert.equal((await app().request('GET', '/v1/llm-models')).body.total, 0);
    assert.ok(!app().logs.join('').includes(apiKey));
    assert.ok(
      app().logs.some((l) => l.includes('generated a secrets encryption key')),
      'embedded mode says it generated a key',
    );
  });
});
