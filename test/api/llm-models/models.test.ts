import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { uuidv7 } from 'uuidv7';
import { addModel, createCaller, createOtherOrg, createProvider, useSuiteApp } from '../llm-providers/helpers.js';

describe('llm models: manual models, listing, default (postgres)', () => {
  const app = useSuiteApp();

  it('POST /v1/llm-providers/{id}/models - 201 manual model; display_name defaults to model_id; 409 for a duplicate', async () => {
    const p = await createProvider(app(), { name: 'Vendor', provider_type: 'openai_completions', base_url: 'http://127.0.0.1:9/v1' });
    const r = await app().request('POST', `/v1/llm-providers/${p['id']}/models`, {
      body: { model_id: 'qwen3-32b', capabilities: ['chat', 'tools'] },
    });
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(
      { ...r.body, id: 0, created_at: 0, updated_at: 0 },
      {
        id: 0,
        provider_id: p['id'],
        provider_name: 'Vendor',
        provider_type: 'openai_completions',
        model_id: 'qwen3-32b',
        display_name: 'qwen3-32b',
        capabilities: ['chat', 'tools'],
        enabled: true,
        context_window: null,
        max_output_tokens: null,
        source: 'manual',
        status: 'active',
        created_at: 0,
        updated_at: 0,
      },
    );
    const dup = await app().request('POST', `/v1/llm-providers/${p['id']}/models`, {
      body: { model_id: 'qwen3-32b', display_name: 'Again' },
    });
    assert.equal(dup.status, 409);
    assert.equal((await app().request('POST', `/v1/llm-providers/${p['id']}/models`, { body: { display_name: 'no id' } })).status, 400);
    assert.equal((await app().request('POST', `/v1/llm-providers/${uuidv7()}/models`, { body: { model_id: 'x' } })).status, 404);
    const list = await app().request('GET', `/v1/llm-providers/${p['id']}/models`);
    assert.deepEqual(list.body, { data: [r.body], total: 1 });
  });

  it('GET /v1/llm-models - every provider of the organisation, with filters', async () => {
    const a = await createProvider(app(), { name: 'A' });
    const b = await createProvider(app(), { name: 'B' });
    const ma = await addModel(app(), a['id'], { model_id: 'alpha', enabled: false });
    const mb = await addModel(app(), b['id'], { model_id: 'beta', display_name: 'Beta' });
    const other = await createOtherOrg(app());
    const foreign = await other.request('POST', '/v1/llm-providers', {
      body: { name: 'F', provider_type: 'llmsim', api_key: 'k-foreign-123' },
    });
    assert.equal(
      (await other.request('POST', `/v1/llm-providers/${foreign.body.id}/models`, { body: { model_id: 'foreign' } })).status,
      201,
    );

    const all = await app().request('GET', '/v1/llm-models');
    assert.equal(all.status, 200);
    assert.equal(all.body.total, all.body.data.length);
    const ids = all.body.data.map((m: any) => m.id);
    assert.ok(ids.includes(ma['id']) && ids.includes(mb['id']));
    assert.ok(!all.body.data.some((m: any) => m.model_id === 'foreign'));
    assert.deepEqual(
      (await app().request('GET', `/v1/llm-models?provider_id=${b['id']}`)).body.data.map((m: any) => m.model_id),
      ['beta'],
    );
    const disabled = (await app().request('GET', '/v1/llm-models?enabled=false')).body.data;
    assert.ok(disabled.every((m: any) => m.enabled === false) && disabled.some((m: any) => m.id === ma['id']));
    assert.ok(
      (await app().request('GET', '/v1/llm-models?source=discovered&status=stale')).body.data.every((m: any) => m.source === 'discovered'),
    );
    assert.equal((await app().request('GET', '/v1/llm-models?source=predefined')).status, 400);
    assert.equal((await other.request('GET', `/v1/llm-providers/${a['id']}/models`)).status, 403);
  });

  it('GET/PATCH /v1/llm-models/{id} - 403 for another organisation, 404 for an unknown id', async () => {
    const p = await createProvider(app());
    const m = await addModel(app(), p['id'], { model_id: 'gamma' });
    assert.deepEqual((await app().request('GET', `/v1/llm-models/${m['id']}`)).body, m);
    const patched = await app().request('PATCH', `/v1/llm-models/${m['id']}`, {
      body: { display_name: 'Gamma', enabled: false, capabilities: ['chat'] },
    });
    assert.equal(patched.status, 200);
    assert.deepEqual(
      [patched.body.display_name, patched.body.enabled, patched.body.capabilities, patched.body.model_id],
      ['Gamma', false, ['chat'], 'gamma'],
    );
    assert.equal((await app().request('PATCH', `/v1/llm-models/${m['id']}`, { body: { model_id: 'other' } })).status, 400);
    const other = await createOtherOrg(app());
    assert.equal((await other.request('GET', `/v1/llm-models/${m['id']}`)).status, 403);
    assert.equal((await other.request('PATCH', `/v1/llm-models/${m['id']}`, { body: { enabled: true } })).status, 403);
    assert.equal((await other.request('DELETE', `/v1/llm-models/${m['id']}`)).status, 403);
    assert.equal((await app().request('GET', `/v1/llm-models/${uuidv7()}`)).status, 404);
  });

  it('DELETE /v1/llm-models/{id} - admin only, 409 while it is a default, 204 otherwise', async () => {
    const member = await createCaller(app(), 'member');
    const p = await createProvider(app());
    const m = await addModel(app(), p['id']);
    const agent = await app().request('POST', '/v1/agents', { body: { name: 'a', system_prompt: 'x', default_model_id: m['id'] } });
    assert.equal(agent.status, 201, agent.text);
    assert.equal((await member.request('DELETE', `/v1/llm-models/${m['id']}`)).status, 403);
    const refused = await app().request('DELETE', `/v1/llm-models/${m['id']}`);
    assert.equal(refused.status, 409);
    assert.match(refused.body.error, /This model is in use as the model of 1 agent/);
    assert.equal((await app().request('DELETE', `/v1/agents/${agent.body.id}`)).status, 204);
    assert.equal((await app().request('DELETE', `/v1/llm-models/${m['id']}`)).status, 409, 'archived agents still count');
    assert.equal((await app().request('PATCH', `/v1/agents/${agent.body.id}`, { body: { default_model_id: null } })).status, 200);
    assert.equal((await app().request('DELETE', `/v1/llm-models/${m['id']}`)).status, 204);
    assert.equal((await app().request('GET', `/v1/llm-models/${m['id']}`)).status, 404);
  });

  it('DELETE /v1/llm-models/{id} - 409 while a session runs with it through its configuration snapshot, after the agent moved on', async () => {
    const p = await createProvider(app());
    const m = await addModel(app(), p['id']);
    const agent = await app().request('POST', '/v1/agents', { body: { name: 'a', system_prompt: 'x', default_model_id: m['id'] } });
    const session = await app().request('POST', '/v1/sessions', { body: { agent_id: agent.body.id } });
    assert.equal(session.status, 201, session.text);
    assert.equal((await app().request('PATCH', `/v1/agents/${agent.body.id}`, { body: { default_model_id: null } })).status, 200);
    const refused = await app().request('DELETE', `/v1/llm-models/${m['id']}`);
    assert.equal(refused.status, 409);
    assert.match(refused.body.error, /in use as the model of 1 session/);
    assert.equal((await app().request('DELETE', `/v1/sessions/${session.body.id}`)).status, 204);
    assert.equal((await app().request('DELETE', `/v1/llm-models/${m['id']}`)).status, 204);
  });

  it('GET/PUT /v1/llm-models/default - the organisation default; admins set it, 404 for a model of another organisation', async () => {
    const member = await createCaller(app(), 'member');
    assert.deepEqual((await member.request('GET', '/v1/llm-models/default')).body, {
      model_id: null,
      model: null,
      system_default: 'llmsim',
    });
    const p = await createProvider(app());
    const m = await addModel(app(), p['id']);
    assert.equal((await member.request('PUT', '/v1/llm-models/default', { body: { model_id: m['id'] } })).status, 403);
    const set = await app().request('PUT', '/v1/llm-models/default', { body: { model_id: m['id'] } });
    assert.equal(set.status, 200);
    assert.deepEqual(set.body, { model_id: m['id'], model: m, system_default: 'llmsim' });
    assert.deepEqual((await member.request('GET', '/v1/llm-models/default')).body, set.body);

    const other = await createOtherOrg(app());
    assert.equal((await other.request('PUT', '/v1/llm-models/default', { body: { model_id: m['id'] } })).status, 404);
    assert.equal((await other.request('GET', '/v1/llm-models/default')).body.model_id, null);
    assert.equal((await app().request('PUT', '/v1/llm-models/default', { body: { model_id: uuidv7() } })).status, 404);
    assert.equal((await app().request('PUT', '/v1/llm-models/default', { body: {} })).status, 400);
    assert.deepEqual((await app().request('PUT', '/v1/llm-models/default', { body: { model_id: null } })).body, {
      model_id: null,
      model: null,
      system_default: 'llmsim',
    });
  });

  it('agents, harnesses and sessions accept only models of the organisation (404 otherwise)', async () => {
    const p = await createProvider(app());
    const m = await addModel(app(), p['id']);
    const other = await createOtherOrg(app());
    const foreignProvider = await other.request('POST', '/v1/llm-providers', {
      body: { name: 'F', provider_type: 'llmsim', api_key: 'k-foreign-123' },
    });
    const foreign = await other.request('POST', `/v1/llm-providers/${foreignProvider.body.id}/models`, { body: { model_id: 'f' } });
    for (const modelId of [uuidv7(), foreign.body.id]) {
      assert.equal(
        (await app().request('POST', '/v1/agents', { body: { name: 'a', system_prompt: 'x', default_model_id: modelId } })).status,
        404,
      );
      assert.equal(
        (await app().request('POST', '/v1/harnesses', { body: { name: 'h', system_prompt: 'x', default_model_id: modelId } })).status,
        404,
      );
    }
    const agent = await app().request('POST', '/v1/agents', { body: { name: 'a', system_prompt: 'x', default_model_id: m['id'] } });
    assert.equal(agent.status, 201);
    assert.equal(
      (await app().request('POST', '/v1/sessions', { body: { agent_id: agent.body.id, model_id: foreign.body.id } })).status,
      404,
    );
    assert.equal((await app().request('POST', '/v1/sessions', { body: { agent_id: agent.body.id, model_id: m['id'] } })).status, 201);
  });
});
