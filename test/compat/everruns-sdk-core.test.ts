/**
 * Clients of the earlier public API (issue 17, items 1-4): each test sends what that API's
 * TypeScript SDK (everruns/sdk, typescript/src/client.ts, v0.2.1) sends for a flow — raw
 * `Authorization: <key>`, `Content-Type: application/json` on every call, `/v1` paths, its
 * snake_case bodies — and asserts what the SDK reads back. The last test replays the reference
 * OpenAPI's request examples where they apply.
 * docs/decisions/0044-earlier-api-aliases.md.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { uuidv7 } from 'uuidv7';
import { mergeClientTools } from '../../actors/session/turn-setup.js';
import type { TestApp } from '../helpers/app.js';
import { addModel, adminOrgId, useSuiteApp } from '../api/agents/helpers.js';
import { listEvents, waitForEvent, type StoredEvent } from '../turns/helpers.js';

interface SdkResponse {
  status: number;
  body: any;
  text: string;
}

/** The SDK's `fetch`: `<base>/v1<path>`, the key as the whole Authorization header, JSON content type always. */
function sdk(app: TestApp) {
  return async (path: string, init: { method?: string; body?: unknown } = {}): Promise<SdkResponse> => {
    const res = await fetch(`${app.url}/v1${path}`, {
      method: init.method ?? 'GET',
      headers: { Authorization: app.adminKey, 'Content-Type': 'application/json' },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, text };
  };
}

/** `messages.create(sessionId, text)`: the SDK wraps a string like this. */
const textMessage = (text: string) => ({ message: { role: 'user', content: [{ type: 'text', text }] } });

const ASK_USER = {
  type: 'client_side',
  name: 'ask_user',
  description: 'Ask the user a question in the client UI.',
  parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
};
const PICK_FILE = {
  type: 'client_side',
  name: 'pick_file',
  description: 'Let the user pick a local file.',
  parameters: { type: 'object', properties: { glob: { type: 'string' } } },
};

const examples = JSON.parse(readFileSync(new URL('./fixtures/reference-request-examples.json', import.meta.url), 'utf8'));

/** A model row named `name` (vendor model id) in the organisation; returns its id. */
async function addNamedModel(app: TestApp, orgId: string, name: string): Promise<string> {
  const id = await addModel(app, orgId);
  await app.app.services.store.sql(`update llm_models set model_id = ? where id = ?`, [name, id]);
  return id;
}

async function idle(app: TestApp, sessionId: string, n = 1): Promise<StoredEvent[]> {
  return waitForEvent(app, sessionId, 'session.idled', { n });
}

describe('earlier public API SDK: core flows', () => {
  const app = useSuiteApp('postgres');

  it('item 1: list helpers read agents / sessions / messages beside data and total', async () => {
    const call = sdk(app());
    const a = await call('/agents', { method: 'POST', body: { name: 'lister-a', system_prompt: 'A.' } });
    const b = await call('/agents', { method: 'POST', body: { name: 'lister-b', system_prompt: 'B.' } });
    assert.equal(a.status, 201, a.text);
    assert.equal(b.status, 201, b.text);

    // agents.list(): `response.agents`
    const agents = await call('/agents');
    assert.equal(agents.status, 200);
    assert.ok(Array.isArray(agents.body.agents), agents.text.slice(0, 200));
    assert.deepEqual(agents.body.agents, agents.body.data);
    assert.equal(agents.body.total, agents.body.data.length);
    assert.ok(
      agents.body.agents.some((x: { id: string }) => x.id === a.body.id) &&
        agents.body.agents.some((x: { id: string }) => x.id === b.body.id),
    );

    // sessions.create({agentId, title}) twice, then sessions.list({agentId}): `response.sessions`
    const s1 = await call('/sessions', { method: 'POST', body: { agent_id: a.body.id, title: 'first' } });
    const s2 = await call('/sessions', { method: 'POST', body: { agent_id: a.body.id, title: 'second' } });
    assert.equal(s1.status, 201, s1.text);
    assert.equal(s2.status, 201, s2.text);
    const sessions = await call(`/sessions?${new URLSearchParams({ agent_id: a.body.id })}`);
    assert.equal(sessions.status, 200);
    assert.deepEqual(sessions.body.sessions.map((s: { id: string }) => s.id).sort(), [s1.body.id, s2.body.id].sort());
    assert.deepEqual(sessions.body.sessions, sessions.body.data);
    assert.deepEqual([sessions.body.total, sessions.body.offset, sessions.body.limit], [2, 0, 20]);

    // messages.create(id, text), then messages.list(id): `response.messages`
    const sent = await call(`/sessions/${s1.body.id}/messages`, { method: 'POST', body: textMessage('hello there') });
    assert.equal(sent.status, 201, sent.text);
    await idle(app(), s1.body.id);
    const messages = await call(`/sessions/${s1.body.id}/messages`);
    assert.equal(messages.status, 200);
    assert.deepEqual(messages.body.messages, messages.body.data);
    assert.equal(messages.body.total, 2);
    assert.deepEqual(
      messages.body.messages.map((m: { role: string }) => m.role),
      ['user', 'agent'],
    );
    assert.equal(messages.body.messages[0].content[0].text, 'hello there');

    // The documented response schemas name the alias.
    const doc = (await app().request('GET', '/api-doc/openapi.json')).body;
    for (const [schema, alias] of [
      ['AgentList', 'agents'],
      ['SessionList', 'sessions'],
      ['MessageList', 'messages'],
    ] as const) {
      assert.equal(doc.components.schemas[schema].properties[alias]?.type, 'array', `${schema}.${alias}`);
    }
  });

  it('item 2: client tools declared as tools on agents (POST/PUT/PATCH) and sessions, merged for the turn', async () => {
    const call = sdk(app());
    // agents.create({name, systemPrompt, tools}) — `model` is undefined and dropped by JSON.stringify.
    const created = await call('/agents', {
      method: 'POST',
      body: { name: 'tooling', system_prompt: 'You help.', capabilities: [{ ref: 'current_time' }], tools: [ASK_USER] },
    });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(created.body.client_tools, [{ ...ASK_USER, type: 'client' }]);
    const agentId = created.body.id as string;

    const patched = await call(`/agents/${agentId}`, { method: 'PATCH', body: { tools: [ASK_USER, { ...PICK_FILE, type: 'client' }] } });
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual(
      patched.body.client_tools.map((t: { name: string }) => t.name),
      ['ask_user', 'pick_file'],
    );
    const putId = uuidv7();
    const put = await call(`/agents/${putId}`, {
      method: 'PUT',
      body: { name: 'tooling-put', system_prompt: 'You help.', tools: [PICK_FILE] },
    });
    assert.equal(put.status, 201, put.text);
    assert.deepEqual(
      put.body.client_tools.map((t: { name: string; type: string }) => [t.type, t.name]),
      [['client', 'pick_file']],
    );
    const back = await call(`/agents/${agentId}`, { method: 'PATCH', body: { tools: [ASK_USER] } });
    assert.deepEqual(
      back.body.client_tools.map((t: { name: string }) => t.name),
      ['ask_user'],
    );

    // Refused as before, with a reason: server tools cannot be declared, a capability tool's name is taken, one of the two keys.
    for (const tools of [
      [{ type: 'builtin', name: 'x', description: 'x', parameters: { type: 'object' } }],
      [{ ...ASK_USER, name: 'get_current_time' }],
      [{ ...ASK_USER, color: 'red' }],
    ]) {
      const r = await call('/agents', {
        method: 'POST',
        body: { name: 'bad', system_prompt: 'x', capabilities: [{ ref: 'current_time' }], tools },
      });
      assert.equal(r.status, 400, JSON.stringify(tools));
    }
    const both = await call('/agents', {
      method: 'POST',
      body: { name: 'bad', system_prompt: 'x', tools: [ASK_USER], client_tools: [{ ...ASK_USER, type: 'client' }] },
    });
    assert.equal(both.status, 400);
    assert.match(both.body.error, /not both/);

    // sessions.create({agentId, tools}): the session adds pick_file and redefines ask_user (the session's wins).
    const askAgain = { ...ASK_USER, description: 'Session version of ask_user.' };
    const session = await call('/sessions', { method: 'POST', body: { agent_id: agentId, tools: [PICK_FILE, askAgain] } });
    assert.equal(session.status, 201, session.text);
    const sessionId = session.body.id as string;
    const badSession = await call('/sessions', {
      method: 'POST',
      body: { agent_id: agentId, tools: [{ ...PICK_FILE, name: 'get_current_time' }] },
    });
    assert.equal(badSession.status, 400, 'a session tool may not take a capability tool name');

    const sent = await call(`/sessions/${sessionId}/messages`, {
      method: 'POST',
      body: textMessage('@tool pick_file {"glob":"*.md"}\n@tool ask_user {"q":"which?"}\n@tool get_current_time {}'),
    });
    assert.equal(sent.status, 201, sent.text);
    let events = await waitForEvent(app(), sessionId, 'tool.call_requested');
    const calls = events.find((e) => e.type === 'tool.call_requested')!.data['tool_calls'] as { id: string; name: string }[];
    assert.deepEqual(calls.map((c) => c.name).sort(), ['ask_user', 'pick_file'], 'both go to the client; the server tool runs');
    // messages.createToolResults(): {tool_results: [{tool_call_id, result, error}]}, retried by the SDK on 409 "not waiting".
    let submitted: SdkResponse;
    for (let attempt = 0; ; attempt++) {
      submitted = await call(`/sessions/${sessionId}/tool-results`, {
        method: 'POST',
        body: { tool_results: calls.map((c) => ({ tool_call_id: c.id, result: { ok: c.name } })) },
      });
      if (submitted.status !== 409 || attempt >= 5) break;
      assert.match(submitted.text, /not waiting for tool results/);
      await new Promise((r) => setTimeout(r, 100 * 2 ** attempt));
    }
    assert.equal(submitted.status, 200, submitted.text);
    assert.equal(submitted.body.accepted, 2);
    events = await idle(app(), sessionId);
    const reply = events.filter((e) => e.type === 'output.message.completed').at(-1)!;
    assert.match(reply.data['message'].content[0].text, /Received 3 tool results/);

    // An agent switch keeps the session's own tools (they are the session's, not the agent's).
    const other = await call('/agents', { method: 'POST', body: { name: 'tooling-other', system_prompt: 'x' } });
    assert.equal((await call(`/sessions/${sessionId}`, { method: 'PATCH', body: { agent_id: other.body.id } })).status, 200);
    await call(`/sessions/${sessionId}/messages`, { method: 'POST', body: textMessage('@tool pick_file {}') });
    events = await waitForEvent(app(), sessionId, 'tool.call_requested', { n: 2 });
    assert.equal(events.filter((e) => e.type === 'tool.call_requested')[1]!.data['tool_calls'][0].name, 'pick_file');
    assert.equal((await call(`/sessions/${sessionId}/cancel`, { method: 'POST' })).status, 200);

    // Session tools go with the session, not the agent: a second session of the agent has only ask_user.
    const plain = await call('/sessions', { method: 'POST', body: { agent_id: agentId } });
    await call(`/sessions/${plain.body.id}/messages`, { method: 'POST', body: textMessage('@tool pick_file {}') });
    events = await idle(app(), plain.body.id);
    assert.equal(events.find((e) => e.type === 'tool.completed')?.data['error'], 'Unknown tool: pick_file');

    // The merge rule itself: the session's definition replaces the agent's of the same name.
    const merged = mergeClientTools(
      [
        { name: 'ask_user', description: 'agent' },
        { name: 'x', description: 'agent' },
      ],
      [{ name: 'ask_user', description: 'session' }],
    );
    assert.deepEqual(merged, [
      { name: 'x', description: 'agent' },
      { name: 'ask_user', description: 'session' },
    ]);
  });

  it('item 3: model on agents, by model name or id, echoed back; unknown 404, ambiguous 409, disagreeing 400', async () => {
    const call = sdk(app());
    const orgId = await adminOrgId(app());
    const simId = await addNamedModel(app(), orgId, 'llmsim-compat');
    const gptA = await addNamedModel(app(), orgId, 'gpt-compat');
    await addNamedModel(app(), orgId, 'gpt-compat');

    // agents.create({name, systemPrompt, model}): toAgentBody always sends `model`.
    const byName = await call('/agents', { method: 'POST', body: { name: 'modelled', system_prompt: 'x', model: 'llmsim-compat' } });
    assert.equal(byName.status, 201, byName.text);
    assert.equal(byName.body.model, 'llmsim-compat');
    assert.equal(byName.body.default_model_id, simId);
    assert.deepEqual((await call(`/agents/${byName.body.id}`)).body, byName.body);

    const byId = await call('/agents', { method: 'POST', body: { name: 'modelled-id', system_prompt: 'x', model: gptA.toUpperCase() } });
    assert.equal(byId.status, 201, byId.text);
    assert.equal(byId.body.default_model_id, gptA);

    const unknown = await call('/agents', { method: 'POST', body: { name: 'm', system_prompt: 'x', model: 'no-such-model' } });
    assert.equal(unknown.status, 404);
    assert.equal((await call('/agents', { method: 'POST', body: { name: 'm', system_prompt: 'x', model: uuidv7() } })).status, 404);
    const ambiguous = await call('/agents', { method: 'POST', body: { name: 'm', system_prompt: 'x', model: 'gpt-compat' } });
    assert.equal(ambiguous.status, 409);
    assert.match(ambiguous.body.error, /matches 2 models.*give the model id/);
    const disagree = await call('/agents', {
      method: 'POST',
      body: { name: 'm', system_prompt: 'x', model: 'llmsim-compat', default_model_id: gptA },
    });
    assert.equal(disagree.status, 400);
    const agree = await call('/agents', {
      method: 'POST',
      body: { name: 'm', system_prompt: 'x', model: 'llmsim-compat', default_model_id: simId },
    });
    assert.equal(agree.status, 201, agree.text);

    // PUT with the agent as read (the SDK's apply) keeps it; PATCH default_model_id moves `model` along.
    const { id, ...echoed } = byName.body;
    const applied = await call(`/agents/${id}`, { method: 'PUT', body: echoed });
    assert.equal(applied.status, 200, applied.text);
    assert.deepEqual([applied.body.model, applied.body.default_model_id], ['llmsim-compat', simId]);
    const moved = await call(`/agents/${id}`, { method: 'PATCH', body: { default_model_id: gptA } });
    assert.deepEqual([moved.body.model, moved.body.default_model_id], [gptA, gptA]);
    const renamed = await call(`/agents/${id}`, { method: 'PATCH', body: { model: 'llmsim-compat' } });
    assert.deepEqual([renamed.body.model, renamed.body.default_model_id], ['llmsim-compat', simId]);
    // Export keeps the reference by name; importing it resolves the name again.
    const exported = await app().request('GET', `/v1/agents/${id}/export`);
    assert.match(exported.text, /^model: llmsim-compat$/m);
    const imported = await app().request('POST', '/v1/agents/import', { raw: exported.text, headers: { 'content-type': 'text/markdown' } });
    assert.equal(imported.status, 201, imported.text);
    assert.deepEqual([imported.body.model, imported.body.default_model_id], ['llmsim-compat', simId]);
    const cleared = await call(`/agents/${id}`, { method: 'PATCH', body: { model: null } });
    assert.deepEqual([cleared.body.model, cleared.body.default_model_id], [null, null]);
  });

  it('item 4: display_name, parallel_tool_calls, harness_name/agent_name, locale, message metadata/tags, controls.modelId', async () => {
    const call = sdk(app());
    // display_name and parallel_tool_calls are stored and returned.
    const serial = await call('/agents', {
      method: 'POST',
      body: {
        name: 'serial',
        system_prompt: 'x',
        display_name: 'Serial Agent',
        capabilities: [{ ref: 'current_time' }],
        parallel_tool_calls: false,
      },
    });
    assert.equal(serial.status, 201, serial.text);
    assert.deepEqual([serial.body.display_name, serial.body.parallel_tool_calls], ['Serial Agent', false]);
    const fetched = (await call(`/agents/${serial.body.id}`)).body;
    assert.deepEqual([fetched.display_name, fetched.parallel_tool_calls], ['Serial Agent', false]);

    // parallel_tool_calls false: the step's tools run one at a time; a session may turn it back on.
    const twoTools = '@tool get_current_time {}\n@tool get_current_time {}';
    const order = async (sessionBody: Record<string, unknown>) => {
      const s = await call('/sessions', { method: 'POST', body: { agent_id: serial.body.id, ...sessionBody } });
      assert.equal(s.status, 201, s.text);
      await call(`/sessions/${s.body.id}/messages`, { method: 'POST', body: textMessage(twoTools) });
      const events = await idle(app(), s.body.id);
      return events.filter((e) => e.type === 'tool.started' || e.type === 'tool.completed').map((e) => e.type.slice(5));
    };
    assert.deepEqual(await order({}), ['started', 'completed', 'started', 'completed']);
    assert.deepEqual(await order({ parallel_tool_calls: true }), ['started', 'started', 'completed', 'completed']);

    // harness_name / agent_name: resolved by name in the organisation.
    const named = await call('/sessions', {
      method: 'POST',
      body: { harness_name: 'generic', agent_name: 'serial', title: 't', locale: 'uk-UA', tags: ['a'] },
    });
    assert.equal(named.status, 201, named.text);
    assert.equal(named.body.agent_id, serial.body.id);
    const generic = (await call('/harnesses')).body.data.find((h: { name: string }) => h.name === 'generic');
    assert.equal(named.body.harness_id, generic.id);
    const [stored] = await app().app.services.store.sql<{ locale: string }>(
      `select config #>> '{session,locale}' as locale from sessions where id = ?`,
      [named.body.id],
    );
    assert.equal(stored!.locale, 'uk-UA');
    await call('/agents', { method: 'POST', body: { name: 'twin', system_prompt: 'x' } });
    await call('/agents', { method: 'POST', body: { name: 'twin', system_prompt: 'y' } });
    const twin = await call('/sessions', { method: 'POST', body: { agent_name: 'twin' } });
    assert.equal(twin.status, 409);
    assert.match(twin.body.error, /ambiguous: 2 agents .* give agent_id/);
    assert.equal((await call('/sessions', { method: 'POST', body: { agent_name: 'nobody' } })).status, 404);
    assert.equal((await call('/sessions', { method: 'POST', body: { harness_name: 'nothing-like-it' } })).status, 404);
    assert.equal((await call('/sessions', { method: 'POST', body: { agent_id: serial.body.id, agent_name: 'serial' } })).status, 400);

    // messages.create(id, {message, controls: {modelId}, metadata, tags}): kept on the input message.
    const sessionId = named.body.id as string;
    const sent = await call(`/sessions/${sessionId}/messages`, {
      method: 'POST',
      body: {
        ...textMessage('tagged'),
        controls: { modelId: 'llmsim', locale: 'uk-UA' },
        metadata: { source: 'sdk', n: 1 },
        tags: ['from-sdk'],
      },
    });
    assert.equal(sent.status, 201, sent.text);
    assert.deepEqual(sent.body.metadata, { source: 'sdk', n: 1 });
    assert.deepEqual(sent.body.tags, ['from-sdk']);
    assert.deepEqual(sent.body.controls, { model_id: 'llmsim', locale: 'uk-UA' });
    const events = await idle(app(), sessionId);
    assert.ok(
      events.filter((e) => e.context['turn_id']).every((e) => e.tags?.includes('from-sdk')),
      'every event of the turn carries the tag',
    );
    const listed = (await call(`/sessions/${sessionId}/messages`)).body.messages;
    assert.deepEqual(listed[0].metadata, { source: 'sdk', n: 1 });
    assert.deepEqual(listed[0].tags, ['from-sdk']);

    // Both spellings must agree; unknown fields stay a 400 everywhere.
    const disagree = await call(`/sessions/${sessionId}/messages`, {
      method: 'POST',
      body: { ...textMessage('x'), controls: { modelId: 'llmsim', model_id: uuidv7() } },
    });
    assert.equal(disagree.status, 400);
    assert.match(disagree.body.error, /model_id and controls.modelId/);
    for (const [path, body] of [
      ['/agents', { name: 'x', system_prompt: 'x', color: 'red' }],
      ['/agents', { name: 'x', system_prompt: 'x', harness_name: 'generic' }],
      ['/sessions', { agent_id: serial.body.id, hints: {} }],
      [`/sessions/${sessionId}/messages`, { ...textMessage('x'), controls: { errorDisclosure: 'full' } }],
      [`/sessions/${sessionId}/messages`, { ...textMessage('x'), external_actor: { id: 'u' } }],
    ] as const) {
      const r = await call(path, { method: 'POST', body });
      assert.equal(r.status, 400, `${path} ${JSON.stringify(body)}: ${r.text}`);
    }
    assert.equal(
      (await listEvents(app(), sessionId)).filter((e) => e.type === 'input.message').length,
      1,
      'refused messages changed nothing',
    );
  });

  it("replays the reference OpenAPI's request examples for agents, sessions and messages where they apply", async () => {
    const call = sdk(app());
    const orgId = await adminOrgId(app());
    const modelId = await addModel(app(), orgId);
    // Ids in the reference's own format (agent_…, model_…, harness_…) name nothing here; ours are UUIDs.
    const { id: _agentRef, default_model_id: _modelRef, ...agentExample } = examples.CreateAgentRequest;
    const created = await call('/agents', { method: 'POST', body: { ...agentExample, default_model_id: modelId } });
    assert.equal(created.status, 201, created.text);
    for (const [k, v] of Object.entries(agentExample)) assert.deepEqual(created.body[k], v, k);
    assert.equal(
      (await call('/agents', { method: 'POST', body: examples.CreateAgentRequest })).status,
      400,
      'a foreign id format is refused, not ignored',
    );

    const { default_model_id: _m, ...updateExample } = examples.UpdateAgentRequest;
    const updated = await call(`/agents/${created.body.id}`, { method: 'PATCH', body: updateExample });
    assert.equal(updated.status, 200, updated.text);
    for (const [k, v] of Object.entries(updateExample)) assert.deepEqual(updated.body[k], v, k);

    const { agent_id: _a, agent_identity_id: _i, harness_id: _h, model_id: _mm, ...sessionExample } = examples.CreateSessionRequest;
    const session = await call('/sessions', { method: 'POST', body: { ...sessionExample, agent_id: created.body.id, model_id: modelId } });
    assert.equal(session.status, 201, session.text);
    assert.deepEqual([session.body.title, session.body.tags, session.body.model_id], [sessionExample.title, sessionExample.tags, modelId]);

    const { agent_identity_id: _ui, locale: _l, ...sessionUpdate } = examples.UpdateSessionRequest;
    const patched = await call(`/sessions/${session.body.id}`, { method: 'PATCH', body: sessionUpdate });
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual([patched.body.title, patched.body.tags], [sessionUpdate.title, sessionUpdate.tags]);

    // CreateMessageRequest has no property examples; its Controls example names a model in the reference's id format → 404.
    const message = await call(`/sessions/${session.body.id}/messages`, {
      method: 'POST',
      body: { ...textMessage('hi'), controls: examples.Controls },
    });
    assert.equal(message.status, 404);
  });
});
