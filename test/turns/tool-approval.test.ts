import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { assertLogIntegrity, createSession, getSession, listEvents, sendMessage, typesOf, waitForStatus, watch } from './helpers.js';
import { LOCAL_WEB_FETCH, LOCAL_WEB_FETCH_ENV, startSlowServer } from './slow-server.js';

/**
 * Tool approval (decision 0101), in both modes: an `always_ask` call waits for a person before
 * it runs (approve → it runs once; deny → the reason is its error result; cancel → a cancelled
 * result); a `deny` call is refused without a pause; the session's rules win over the agent's.
 */
const ASK_TIME = [{ tool: 'get_current_*', policy: 'always_ask' }];

function decide(app: TestApp, id: string, approvals: unknown[]) {
  return app.request('POST', `/v1/sessions/${id}/approvals`, { body: { approvals } });
}

for (const mode of ['postgres', 'nats'] as const) {
  describe(`turns: tool approval (${mode})`, () => {
    it('ask → approve: the call waits (no tool.started), the decision runs it once, the turn completes', async (t) => {
      const app = await startTestApp(t, { mode });
      const { id } = await createSession(app, { capabilities: ['current_time'] }, { tool_approvals: ASK_TIME });
      const sse = await watch(app, id);
      t.after(() => sse.close());
      assert.equal((await sendMessage(app, id, '@tool get_current_time {"timezone":"UTC"}')).status, 201);
      const events = await sse.until('tool.approval_requested');
      const asked = events.find((e) => e.type === 'tool.approval_requested')!;
      const callId = asked.data['tool_calls'][0].id;
      assert.deepEqual(asked.data['tool_calls'], [{ id: callId, name: 'get_current_time', arguments: { timezone: 'UTC' } }]);
      assert.equal(asked.data['deciders'].org_role, 'admin');
      assert.match(asked.data['deciders'].session_owner, /^[0-9a-f-]{36}$/);
      assert.ok(asked.tags?.includes('tool:get_current_time'));
      await waitForStatus(app, id, 'waiting_for_tool_results');
      assert.equal((await listEvents(app, id)).filter((e) => e.type === 'tool.started').length, 0, 'nothing ran before the decision');

      // While waiting: no new message; an id that asks for nothing is 400.
      assert.equal((await sendMessage(app, id, 'hello?')).status, 409);
      assert.equal((await decide(app, id, [{ tool_call_id: 'nope', approved: true }])).status, 400);
      const r = await decide(app, id, [{ tool_call_id: callId, approved: true }]);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.accepted, 1);

      const done = await sse.until('session.idled');
      const turnId = done.find((e) => e.type === 'turn.started')!.data['turn_id'];
      const decided = done.find((e) => e.type === 'tool.approval_decided')!;
      assert.deepEqual(
        { id: decided.data['tool_call_id'], approved: decided.data['approved'], turn: decided.context['turn_id'] },
        { id: callId, approved: true, turn: turnId },
      );
      assert.equal(done.filter((e) => e.type === 'tool.started').length, 1);
      const result = done.find((e) => e.type === 'tool.completed')!;
      assert.equal(result.data['success'], true);
      const types = typesOf(done, turnId);
      assert.ok(types.indexOf('tool.approval_requested') < types.indexOf('tool.approval_decided'));
      assert.ok(types.indexOf('tool.approval_decided') < types.indexOf('tool.started'));
      assert.equal(types.at(-2), 'turn.completed');
      assert.equal((await getSession(app, id)).status, 'idle');
      assert.equal((await decide(app, id, [{ tool_call_id: callId, approved: true }])).status, 409, 'nothing waits any more');
      assertLogIntegrity(await listEvents(app, id));
    });

    it('ask → deny with a reason: the LLM sees the reason as the error result; the tool never ran', async (t) => {
      const app = await startTestApp(t, { mode });
      const { id } = await createSession(app, { capabilities: ['current_time'] }, { tool_approvals: ASK_TIME });
      const sse = await watch(app, id);
      t.after(() => sse.close());
      assert.equal((await sendMessage(app, id, '@tool get_current_time {}')).status, 201);
      const events = await sse.until('tool.approval_requested');
      const callId = events.find((e) => e.type === 'tool.approval_requested')!.data['tool_calls'][0].id;
      await waitForStatus(app, id, 'waiting_for_tool_results');
      const r = await decide(app, id, [
        { tool_call_id: callId, approved: false, reason: 'not during the audit' },
        { tool_call_id: callId, approved: true },
      ]);
      assert.deepEqual(r.body.accepted, 1, 'one decision per call: the first');
      const done = await sse.until('session.idled');
      assert.equal(done.filter((e) => e.type === 'tool.started').length, 0);
      const result = done.find((e) => e.type === 'tool.completed')!;
      assert.equal(result.data['success'], false);
      assert.equal(result.data['error'], 'not during the audit');
      const reply = done.filter((e) => e.type === 'output.message.completed').at(-1)!;
      assert.match(reply.data['message'].content[0].text, /get_current_time \(error\): not during the audit/);
      assert.equal(done.filter((e) => e.type === 'turn.completed').length, 1);
    });

    it('deny policy: a refusal without a pause; the session rule wins over the agent rule', async (t) => {
      const app = await startTestApp(t, { mode });
      const agentRules = [{ tool: '*', policy: 'always_ask' }];
      const { id } = await createSession(app, { capabilities: ['current_time'], tool_approvals: agentRules } as Record<string, unknown>, {
        tool_approvals: [{ tool: 'get_{current_time,other}', policy: 'deny' }],
      });
      const sse = await watch(app, id);
      t.after(() => sse.close());
      assert.equal((await sendMessage(app, id, '@tool get_current_time {}')).status, 201);
      const done = await sse.until('session.idled');
      assert.equal(done.filter((e) => e.type === 'tool.approval_requested').length, 0);
      assert.equal(done.filter((e) => e.type === 'tool.started').length, 0);
      const result = done.find((e) => e.type === 'tool.completed')!;
      assert.equal(result.data['success'], false);
      assert.match(result.data['error'], /denied by the tool approval policy/);
      assert.equal(done.filter((e) => e.type === 'turn.completed').length, 1);
    });

    it('ask → cancel: the waiting call gets a cancelled result, the session goes idle, decisions are refused', async (t) => {
      const app = await startTestApp(t, { mode });
      const { id } = await createSession(app, { capabilities: ['current_time'] }, { tool_approvals: ASK_TIME });
      const sse = await watch(app, id);
      t.after(() => sse.close());
      assert.equal((await sendMessage(app, id, '@tool get_current_time {}')).status, 201);
      const events = await sse.until('tool.approval_requested');
      const callId = events.find((e) => e.type === 'tool.approval_requested')!.data['tool_calls'][0].id;
      await waitForStatus(app, id, 'waiting_for_tool_results');
      assert.equal((await app.request('POST', `/v1/sessions/${id}/cancel`)).status, 200);
      const done = await sse.until('session.idled');
      assert.deepEqual(typesOf(done).slice(-5), [
        'input.message',
        'tool.completed',
        'act.completed',
        'output.message.completed',
        'session.idled',
      ]);
      const result = done.find((e) => e.type === 'tool.completed')!;
      assert.equal(result.data['success'], false);
      assert.match(result.data['error'], /cancelled/);
      assert.equal(done.filter((e) => e.type === 'tool.started').length, 0);
      assert.equal((await decide(app, id, [{ tool_call_id: callId, approved: true }])).status, 409);
      assert.equal((await getSession(app, id)).status, 'idle');
    });

    it('an approved call next to an allowed one: the allowed one runs before the decision, the other after it', async (t) => {
      const server = await startSlowServer();
      t.after(() => server.close());
      const app = await startTestApp(t, { mode, env: LOCAL_WEB_FETCH_ENV });
      const rules = [{ tool: 'fetch_url', policy: 'always_ask' }];
      const { id } = await createSession(app, { capabilities: ['current_time', LOCAL_WEB_FETCH] }, { tool_approvals: rules });
      const sse = await watch(app, id);
      t.after(() => sse.close());
      const text = [`@tool fetch_url {"url":"${server.url}/slow?ms=0&id=once"}`, '@tool get_current_time {}'].join('\n');
      assert.equal((await sendMessage(app, id, text)).status, 201);
      const events = await sse.until('tool.approval_requested');
      const asked = events.find((e) => e.type === 'tool.approval_requested')!;
      assert.deepEqual(
        asked.data['tool_calls'].map((c: { name: string }) => c.name),
        ['fetch_url'],
      );
      await sse.until('tool.completed');
      await waitForStatus(app, id, 'waiting_for_tool_results');
      assert.equal(server.hits.get('once'), undefined);
      const r = await decide(app, id, [{ tool_call_id: asked.data['tool_calls'][0].id, approved: true }]);
      assert.equal(r.status, 200, r.text);
      const done = await sse.until('session.idled');
      assert.equal(server.hits.get('once'), 1);
      assert.equal(done.filter((e) => e.type === 'tool.completed').length, 2);
      assert.ok(done.filter((e) => e.type === 'tool.completed').every((e) => e.data['success'] === true));
    });
  });
}

describe('tool approval: configuration', () => {
  it('a pattern the engine refuses, an unknown policy and too many rules are 400', async (t) => {
    const app = await startTestApp(t, { mode: 'postgres' });
    const agent = await app.request('POST', '/v1/agents', { body: { name: 'a', system_prompt: 'x' } });
    const create = (tool_approvals: unknown) => app.request('POST', '/v1/sessions', { body: { agent_id: agent.body.id, tool_approvals } });
    assert.equal((await create([{ tool: 'x', policy: 'maybe' }])).status, 400);
    assert.equal((await create(Array.from({ length: 65 }, () => ({ tool: 'x', policy: 'deny' })))).status, 400);
    assert.equal((await create([{ tool: '', policy: 'deny' }])).status, 400);
    const ok = await create([{ tool: 'github__*', policy: 'always_ask' }]);
    assert.equal(ok.status, 201, ok.text);
  });
});
