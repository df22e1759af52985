import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { uuidv7 } from 'uuidv7';
import {
  addModel,
  adminOrgId,
  createCaller,
  createOtherOrg,
  createProvider,
  fakeVendorKey,
  ResponseLedger,
  useSuiteApp,
} from './helpers.js';

describe('llm providers: CRUD (postgres)', () => {
  const app = useSuiteApp();

  it('POST /v1/llm-providers - 201 without the key: api_key_set true, no api_key field', async () => {
    const apiKey = fakeVendorKey();
    const r = await app().request('POST', '/v1/llm-providers', { body: { name: 'OpenAI prod', provider_type: 'openai', api_key: apiKey } });
    assert.equal(r.status, 201, r.text);
    assert.match(r.body.id, /^[0-9a-f-]{36}$/);
    assert.deepEqual(
      { ...r.body, id: 0, created_at: 0, updated_at: 0 },
      {
        id: 0,
        name: 'OpenAI prod',
        provider_type: 'openai',
        base_url: null,
        api_key_set: true,
        last_synced_at: null,
        created_at: 0,
        updated_at: 0,
      },
    );
    assert.ok(!r.text.includes(apiKey));
    const got = await app().request('GET', `/v1/llm-providers/${r.body.id}`);
    assert.deepEqual(got.body, r.body);
  });

  it('POST /v1/llm-providers - 400 without api_key, with an unknown provider_type, a non-http base_url or extra fields', async () => {
    const bodies = [
      { name: 'x', provider_type: 'openai' },
      { name: 'x', provider_type: 'mistral', api_key: 'k' },
      { name: 'x', provider_type: 'openai', api_key: '' },
      { name: 'x', provider_type: 'openai_completions', api_key: 'k', base_url: 'ftp://example.com' },
      { name: 'x', provider_type: 'openai', api_key: 'k', api_key_set: true },
      { provider_type: 'openai', api_key: 'k' },
    ];
    for (const body of bodies) {
      const r = await app().request('POST', '/v1/llm-providers', { body });
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.body.status, 400);
    }
  });

  it('GET /v1/llm-providers - {data, total} in creation order, own organisation only', async () => {
    const other = await createOtherOrg(app());
    const foreign = await other.request('POST', '/v1/llm-providers', {
      body: { name: 'Foreign', provider_type: 'anthropic', api_key: fakeVendorKey() },
    });
    assert.equal(foreign.status, 201);
    const a = await createProvider(app(), { name: 'A' });
    const b = await createProvider(app(), { name: 'B', provider_type: 'openai_completions', base_url: 'http://127.0.0.1:9/v1/' });
    assert.equal(b['base_url'], 'http://127.0.0.1:9/v1', 'trailing slash trimmed');
    const list = await app().request('GET', '/v1/llm-providers');
    assert.equal(list.status, 200);
    assert.equal(list.body.total, list.body.data.length);
    const ids = list.body.data.map((p: any) => p.id);
    assert.ok(ids.indexOf(a['id']) < ids.indexOf(b['id']));
    assert.ok(!ids.includes(foreign.body.id));
    assert.equal((await app().request('GET', `/v1/llm-providers/${foreign.body.id}`)).status, 403);
    assert.equal((await app().request('GET', `/v1/llm-providers/${uuidv7()}`)).status, 404);
    assert.equal((await other.request('GET', '/v1/llm-providers')).body.total, 1);
  });

  it('PATCH /v1/llm-providers/{id} - changes only the given fields; a new key is sealed again', async () => {
    const p = await createProvider(app(), { name: 'Old', provider_type: 'openai_completions', base_url: 'http://127.0.0.1:9/v1' });
    const sealed = async () =>
      (await app().app.services.store.sql<{ k: string }>('select api_key_encrypted as k from llm_providers where id = ?', [p['id']]))[0]!.k;
    const before = await sealed();
    const renamed = await app().request('PATCH', `/v1/llm-providers/${p['id']}`, { body: { name: 'New' } });
    assert.equal(renamed.status, 200);
    assert.equal(renamed.body.name, 'New');
    assert.equal(renamed.body.base_url, 'http://127.0.0.1:9/v1');
    assert.equal(await sealed(), before, 'key untouched without api_key');
    const newKey = fakeVendorKey();
    const rekeyed = await app().request('PATCH', `/v1/llm-providers/${p['id']}`, { body: { api_key: newKey, base_url: null } });
    assert.equal(rekeyed.status, 200);
    assert.equal(rekeyed.body.api_key_set, true);
    assert.equal(rekeyed.body.base_url, null);
    assert.ok(!rekeyed.text.includes(newKey));
    assert.notEqual(await sealed(), before);
    const row = await app().app.modules.llmProviders.service.getRow(await adminOrgId(app()), p['id']);
    assert.equal(app().app.modules.llmProviders.service.openConfig(row).api_key, newKey);
    assert.equal((await app().request('PATCH', `/v1/llm-providers/${p['id']}`, { body: { provider_type: 'openai' } })).status, 400);
    assert.equal((await app().request('PATCH', `/v1/llm-providers/${p['id']}`, { body: { api_key: null } })).status, 400);
  });

  it('DELETE /v1/llm-providers/{id} - 403 for a member, 204 for an admin; its models go with it', async () => {
    const member = await createCaller(app(), 'member');
    const admin2 = await createCaller(app(), 'admin');
    const p = await createProvider(app());
    const m = await addModel(app(), p['id']);
    const denied = await member.request('DELETE', `/v1/llm-providers/${p['id']}`);
    assert.equal(denied.status, 403);
    assert.deepEqual(denied.body, { error: 'Forbidden', status: 403 });
    assert.equal((await member.request('GET', `/v1/llm-providers/${p['id']}`)).status, 200, 'members still read');
    assert.equal((await admin2.request('DELETE', `/v1/llm-providers/${p['id']}`)).status, 204);
    assert.equal((await app().request('GET', `/v1/llm-providers/${p['id']}`)).status, 404);
    assert.equal((await app().request('GET', `/v1/llm-models/${m['id']}`)).status, 404);
    assert.equal((await app().request('DELETE', `/v1/llm-providers/${p['id']}`)).status, 404);
  });

  it('DELETE /v1/llm-providers/{id} - 409 while a model is a default of an agent, harness, session or the organisation', async () => {
    const p = await createProvider(app());
    const m = await addModel(app(), p['id']);
    const refuse = async (what: RegExp) => {
      const r = await app().request('DELETE', `/v1/llm-providers/${p['id']}`);
      assert.equal(r.status, 409, r.text);
      assert.match(r.body.error, what);
    };
    const agent = await app().request('POST', '/v1/agents', { body: { name: 'a', system_prompt: 'x', default_model_id: m['id'] } });
    assert.equal(agent.status, 201, agent.text);
    await refuse(/1 agent\b/);
    assert.equal((await app().request('PATCH', `/v1/agents/${agent.body.id}`, { body: { default_model_id: null } })).status, 200);

    const harness = await app().request('POST', '/v1/harnesses', { body: { name: 'h', system_prompt: 'x', default_model_id: m['id'] } });
    assert.equal(harness.status, 201, harness.text);
    await refuse(/1 harness\b/);
    assert.equal((await app().request('PATCH', `/v1/harnesses/${harness.body.id}`, { body: { default_model_id: null } })).status, 200);

    const plain = await app().request('POST', '/v1/agents', { body: { name: 'b', system_prompt: 'x' } });
    const session = await app().request('POST', '/v1/sessions', { body: { agent_id: plain.body.id, model_id: m['id'] } });
    assert.equal(session.status, 201, session.text);
    await refuse(/1 session\b/);
    assert.equal((await app().request('DELETE', `/v1/sessions/${session.body.id}`)).status, 204);

    assert.equal((await app().request('PUT', '/v1/llm-models/default', { body: { model_id: m['id'] } })).status, 200);
    await refuse(/organization default/);
    assert.equal((await app().request('PUT', '/v1/llm-models/default', { body: { model_id: null } })).status, 200);

    assert.equal((await app().request('DELETE', `/v1/llm-providers/${p['id']}`)).status, 204);
  });

  it('the provider key never appears in a response or a log line', async () => {
    const ledger = new ResponseLedger();
    const apiKey = fakeVendorKey('sk-never-shown');
    const replacement = fakeVendorKey('sk-never-shown-2');
    const p = await createProvider(app(), { provider_type: 'llmsim', api_key: apiKey }, ledger);
    ledger.record(await app().request('GET', '/v1/llm-providers'));
    ledger.record(await app().request('GET', `/v1/llm-providers/${p['id']}`));
    ledger.record(await app().request('PATCH', `/v1/llm-providers/${p['id']}`, { body: { api_key: replacement } }));
    ledger.record(await app().request('POST', `/v1/llm-providers/${p['id']}/sync-models`));
    ledger.record(await app().request('GET', '/v1/llm-models'));
    ledger.record(await app().request('POST', '/v1/llm-providers', { body: { name: 'bad', provider_type: 'nope', api_key: apiKey } }));
    const doc = ledger.record(await app().request('GET', '/api-doc/openapi.json'));
    assert.equal(doc.status, 200);
    for (const path of ['/v1/llm-providers', '/v1/llm-providers/{id}/sync-models', '/v1/llm-models/default'])
      assert.ok(doc.body.paths[path], path);
    for (const secret of [apiKey, replacement]) {
      ledger.assertAbsent(secret);
      assert.ok(!app().logs.join('').includes(secret), 'a log line contains the provider key');
    }
    const rows = await app().app.services.store.sql<{ k: string }>('select api_key_encrypted as k from llm_providers');
    assert.ok(
      rows.every((r) => !r.k.includes(apiKey) && !r.k.includes(replacement)),
      'stored in clear',
    );
  });
});
