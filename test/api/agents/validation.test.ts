import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { uuidv7 } from 'uuidv7';
import { addCaller, addModel, adminOrgId, agentBody, useSuiteApp } from './helpers.js';

const tool = (name: string, parameters: Record<string, unknown> = { type: 'object', properties: {} }) => ({
  type: 'client',
  name,
  description: `${name} tool`,
  parameters,
});

describe('agent capabilities, client tools and preview', () => {
  const app = useSuiteApp('postgres');
  const post = (extra: Record<string, unknown>) => app().request('POST', '/v1/agents', { body: agentBody(extra) });

  it('accepts capability ids and {ref, config?} items and returns them as sent', async () => {
    const caps = [
      'current_time',
      { ref: 'web_fetch', config: { timeout_ms: 1000 } },
      { ref: 'session_file_system', config: { max_file_size_mb: 5 } },
      { ref: 'session_storage' },
    ];
    const r = await post({ capabilities: caps });
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(r.body.capabilities, caps);
  });

  it('422 for an unknown capability ref on POST, PUT and PATCH', async () => {
    for (const caps of [['teleport'], [{ ref: 'teleport' }], ['current_time', { ref: 'nope', config: {} }]]) {
      const r = await post({ capabilities: caps });
      assert.equal(r.status, 422, JSON.stringify(caps));
      assert.equal(r.body.status, 422);
    }
    const agent = (await post({})).body;
    assert.equal((await app().request('PUT', `/v1/agents/${agent.id}`, { body: agentBody({ capabilities: ['teleport'] }) })).status, 422);
    assert.equal((await app().request('PATCH', `/v1/agents/${agent.id}`, { body: { capabilities: ['teleport'] } })).status, 422);
    assert.deepEqual((await app().request('GET', `/v1/agents/${agent.id}`)).body.capabilities, []);
  });

  it("422 when a config does not match the capability's config schema", async () => {
    for (const config of [{ timeout_ms: 'soon' }, { no_such_setting: true }]) {
      const r = await post({ capabilities: [{ ref: 'web_fetch', config }] });
      assert.equal(r.status, 422, JSON.stringify(config));
    }
    assert.equal((await post({ capabilities: [{ ref: 'current_time', config: { default_timezone: 'Mars/Olympus' } }] })).status, 422);
  });

  it('400 for capability items of the wrong shape', async () => {
    for (const caps of [[42], [{ ref: 'current_time', extra: 1 }], [{ config: {} }], [''], 'current_time']) {
      assert.equal((await post({ capabilities: caps })).status, 400, JSON.stringify(caps));
    }
  });

  it('client tools: valid ones are stored with type "client" filled in', async () => {
    const { type: _t, ...untyped } = tool('lookup');
    const r = await post({
      client_tools: [
        untyped,
        tool('ask_user', { type: 'object', properties: { q: { type: 'string', format: 'email' } }, required: ['q'], 'x-vendor': 1 }),
      ],
    });
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(
      r.body.client_tools.map((t: { type: string; name: string }) => [t.type, t.name]),
      [
        ['client', 'lookup'],
        ['client', 'ask_user'],
      ],
    );
  });

  it('client tools: 400 when parameters is not a compiling JSON Schema with type "object"', async () => {
    for (const parameters of [
      { type: 'string' },
      { properties: {} },
      { type: ['object', 'null'] },
      { type: 'object', properties: { a: { type: 'nope' } } },
      { type: 'object', required: 'a' },
      { type: 'object', properties: { a: { $ref: '#/definitions/missing' } } },
      [],
    ]) {
      const r = await post({ client_tools: [tool('t', parameters as Record<string, unknown>)] });
      assert.equal(r.status, 400, JSON.stringify(parameters));
    }
  });

  it('client tools: 400 for duplicate names, bad names, a wrong type, or missing fields', async () => {
    assert.equal((await post({ client_tools: [tool('same'), tool('same')] })).status, 400);
    assert.equal((await post({ client_tools: [tool('has space')] })).status, 400);
    assert.equal((await post({ client_tools: [{ ...tool('x'), type: 'server' }] })).status, 400);
    assert.equal((await post({ client_tools: [{ name: 'x', parameters: { type: 'object' } }] })).status, 400);
  });

  it('client tools: 400 when a name is taken by a capability tool, including one added as a dependency', async () => {
    assert.equal((await post({ capabilities: ['current_time'], client_tools: [tool('get_current_time')] })).status, 400);
    assert.equal((await post({ capabilities: ['session_schedule'], client_tools: [tool('get_current_time')] })).status, 400);
    assert.equal((await post({ client_tools: [tool('get_current_time')] })).status, 201);
    const agent = (await post({ client_tools: [tool('fetch_url')] })).body;
    const clash = await app().request('PATCH', `/v1/agents/${agent.id}`, { body: { capabilities: ['web_fetch'] } });
    assert.equal(clash.status, 400);
  });

  it('default_model_id must name a model of the organisation (404 otherwise); null or absent means none', async () => {
    const mine = await addModel(app(), await adminOrgId(app()));
    const other = await addCaller(app());
    const theirs = await addModel(app(), other.orgId);
    const ok = await post({ default_model_id: mine });
    assert.equal(ok.status, 201, ok.text);
    assert.equal(ok.body.default_model_id, mine);
    assert.equal((await post({ default_model_id: theirs })).status, 404);
    assert.equal((await post({ default_model_id: uuidv7() })).status, 404);
    assert.equal((await post({ default_model_id: null })).status, 201);
    assert.equal((await app().request('PUT', `/v1/agents/${uuidv7()}`, { body: agentBody({ default_model_id: theirs }) })).status, 404);
    assert.equal((await app().request('PATCH', `/v1/agents/${ok.body.id}`, { body: { default_model_id: theirs } })).status, 404);
    const renamed = await app().request('PATCH', `/v1/agents/${ok.body.id}`, { body: { name: 'kept model' } });
    assert.equal(renamed.body.default_model_id, mine);
    assert.equal(
      (await app().request('PATCH', `/v1/agents/${ok.body.id}`, { body: { default_model_id: null } })).body.default_model_id,
      null,
    );
  });

  it('default_model_id must be a UUID; max_iterations an integer in 1..1000', async () => {
    assert.equal((await post({ default_model_id: 'gpt-4o' })).status, 400);
    assert.equal((await post({ max_iterations: 1 })).status, 201);
    assert.equal((await post({ max_iterations: 1000 })).status, 201);
    assert.equal((await post({ max_iterations: 1001 })).status, 400);
    assert.equal((await post({ max_iterations: 2.5 })).status, 400);
  });

  it('POST /v1/agents/preview - capability instructions prepended, capability and client tools listed, nothing stored', async () => {
    const before = (await app().request('GET', '/v1/agents?include_archived=true')).body.total;
    const caps = (await app().request('GET', '/v1/capabilities')).body.data as { id: string; system_prompt: string }[];
    const currentTime = caps.find((c) => c.id === 'current_time')!;
    const r = await app().request('POST', '/v1/agents/preview', {
      body: { system_prompt: 'BASE PROMPT', capabilities: [{ ref: 'session_schedule' }], client_tools: [tool('ask_user')] },
    });
    assert.equal(r.status, 200, r.text);
    assert.ok(r.body.system_prompt.endsWith('BASE PROMPT'));
    assert.ok(r.body.system_prompt.length > 'BASE PROMPT'.length);
    assert.ok(r.body.system_prompt.includes(currentTime.system_prompt.trim()), 'the dependency current_time contributes its prompt');
    const names = r.body.tools.map((t: { name: string }) => t.name);
    assert.ok(names.includes('get_current_time'));
    assert.ok(names.includes('create_schedule'));
    assert.equal(names.at(-1), 'ask_user');
    for (const t of r.body.tools) {
      assert.deepEqual(Object.keys(t).sort(), ['description', 'name', 'parameters']);
      assert.equal(t.parameters.type, 'object');
    }
    assert.equal((await app().request('GET', '/v1/agents?include_archived=true')).body.total, before);
  });

  it('POST /v1/agents/preview - no capabilities gives the base prompt and no tools; errors as on create', async () => {
    const plain = await app().request('POST', '/v1/agents/preview', { body: { system_prompt: 'Only me' } });
    assert.deepEqual(plain.body, { system_prompt: 'Only me', tools: [] });
    assert.equal(
      (await app().request('POST', '/v1/agents/preview', { body: { system_prompt: 'x', capabilities: ['teleport'] } })).status,
      422,
    );
    assert.equal((await app().request('POST', '/v1/agents/preview', { body: { capabilities: [] } })).status, 400);
  });

  it('agents.getActive - the snapshot of an active one; 404 unknown, 403 another org, 422 archived', async () => {
    const agents = app().app.modules.agents.service;
    const orgId = await adminOrgId(app());
    const agent = (await post({ name: 'Usable', parallel_tool_calls: false })).body;
    const active = await agents.getActive(orgId, agent.id);
    assert.equal(active.id, agent.id);
    assert.deepEqual(active.snapshot, {
      system_prompt: agent.system_prompt,
      capabilities: agent.capabilities,
      default_model_id: agent.default_model_id,
      max_iterations: agent.max_iterations,
      client_tools: agent.client_tools,
      parallel_tool_calls: false,
    });
    await assert.rejects(agents.getActive(orgId, uuidv7()), { status: 404 });
    const other = await addCaller(app());
    const theirs = (await other.request('POST', '/v1/agents', { body: agentBody() })).body;
    await assert.rejects(agents.getActive(orgId, theirs.id), { status: 403 });
    await app().request('DELETE', `/v1/agents/${agent.id}`);
    await assert.rejects(agents.getActive(orgId, agent.id), { status: 422, message: 'Agent is archived' });
  });

  it('a member (non-admin) manages agents of the own organisation', async () => {
    const member = await addCaller(app(), { role: 'member', orgId: await adminOrgId(app()) });
    const r = await member.request('POST', '/v1/agents', { body: agentBody({ name: 'By member' }) });
    assert.equal(r.status, 201);
    assert.equal((await app().request('GET', `/v1/agents/${r.body.id}`)).body.name, 'By member');
  });
});
