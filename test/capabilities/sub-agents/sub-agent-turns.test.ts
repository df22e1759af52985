/**
 * Sub-agents in real turns, through the HTTP API, on both buses: agents with the `sub_agents`
 * capability call each other as `agent__<name>` tools; llmsim scripts every model (the parent's
 * tool argument is the child's user message, so it carries the child's directives).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startTestApp, type TestApp } from '../../helpers/app.js';
import { listEvents, sendMessage, waitForEvent, watch, type StoredEvent } from '../../turns/helpers.js';

const LIMITS = { SUBAGENT_MAX_DEPTH: 2, SUBAGENT_MAX_CHILDREN_PER_TURN: 2 };

async function agent(app: TestApp, name: string, calls: string[] = []): Promise<string> {
  const capabilities = calls.length ? [{ ref: 'sub_agents', config: { agents: calls } }] : [];
  const r = await app.request('POST', '/v1/agents', { body: { name, system_prompt: `You are ${name}.`, capabilities } });
  assert.equal(r.status, 201, r.text);
  return r.body.id;
}

async function session(app: TestApp, agentId: string): Promise<string> {
  const r = await app.request('POST', '/v1/sessions', { body: { agent_id: agentId } });
  assert.equal(r.status, 201, r.text);
  return r.body.id;
}

/** `@tool agent__NAME {"message": text}` as llmsim reads it. */
const ask = (name: string, text: string) => `@tool agent__${name} ${JSON.stringify({ message: text })}`;

/** The events of the session's latest turn, once it is idle again. */
async function turnOf(app: TestApp, id: string, idled = 1): Promise<StoredEvent[]> {
  const events = await waitForEvent(app, id, 'session.idled', { n: idled, timeoutMs: 60_000 });
  const turnId = events.filter((e) => e.type === 'turn.started').at(-1)!.data['turn_id'];
  return events.filter((e) => e.context['turn_id'] === turnId);
}

const one = (events: StoredEvent[], type: string) => {
  const found = events.filter((e) => e.type === type);
  assert.equal(found.length, 1, `one ${type}: ${events.map((e) => e.type).join(', ')}`);
  return found[0]!;
};

const sum = (events: StoredEvent[], type: string) =>
  events
    .filter((e) => e.type === type && e.data['usage'])
    .reduce(
      (u, e) => ({
        input_tokens: u.input_tokens + e.data['usage'].input_tokens,
        output_tokens: u.output_tokens + e.data['usage'].output_tokens,
        cache_read_tokens: u.cache_read_tokens + e.data['usage'].cache_read_tokens,
      }),
      { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0 },
    );

for (const mode of ['pglite', 'nats'] as const) {
  describe(`sub-agents in turns (${mode})`, () => {
    it('parent → child → grandchild; limits; cancel cascades; usage adds up', async (t) => {
      const app = await startTestApp(t, { mode, env: LIMITS });
      const gc = await agent(app, 'gc', ['gc']);
      const kid = await agent(app, 'kid', ['gc']);
      const boss = await agent(app, 'boss', ['kid', 'no-such-agent']);

      await t.test("three levels: the child's final text is the parent's tool result; links both ways; usage rolls up", async () => {
        const parent = await session(app, boss);
        const sse = await watch(app, parent);
        t.after(() => sse.close());
        assert.equal((await sendMessage(app, parent, ask('kid', ask('gc', 'deep hello')))).status, 201);
        const turn = await turnOf(app, parent);

        const started = one(turn, 'subagent.started');
        const done = one(turn, 'tool.completed');
        assert.equal(done.data['success'], true, JSON.stringify(done.data));
        assert.equal(done.data['tool_name'], 'agent__kid');
        const childId = started.data['child_session_id'];
        assert.equal(done.data['child_session_id'], childId);
        assert.equal(started.data['agent_id'], kid);
        assert.equal(started.data['tool_call_id'], done.data['tool_call_id']);
        assert.equal(started.context['exec_id'], done.context['exec_id'], 'one tool execution');
        // The child's final text (its summary of the grandchild's answer) is the parent's tool result.
        assert.deepEqual(done.data['result'], [{ type: 'text', text: 'Received 1 tool result. agent__gc: deep hello' }]);
        // The parent's own stream showed the start and the end.
        const streamed = sse.events().map((e) => e.type);
        assert.ok(streamed.includes('subagent.started') && streamed.includes('tool.completed'), streamed.join(','));

        const child = (await app.request('GET', `/v1/sessions/${childId}`)).body;
        assert.equal(child.parent_session_id, parent);
        assert.equal(child.parent_tool_call_id, done.data['tool_call_id']);
        assert.equal(child.agent_id, kid);
        assert.equal((await app.request('GET', `/v1/sessions/${parent}`)).body.parent_session_id, null);

        const childTurn = await turnOf(app, childId);
        const gcStarted = one(childTurn, 'subagent.started');
        const grandchild = gcStarted.data['child_session_id'];
        const gcSession = (await app.request('GET', `/v1/sessions/${grandchild}`)).body;
        assert.equal(gcSession.parent_session_id, childId);
        assert.equal(gcSession.agent_id, gc);
        assert.equal(gcSession.parent_tool_call_id, gcStarted.data['tool_call_id']);
        const gcTurn = await turnOf(app, grandchild);
        assert.equal(one(gcTurn, 'output.message.completed').data['message'].content[0].text, 'deep hello');

        // Usage: each turn's = its own model calls + its child's turn (which holds the grandchild's).
        const gcUsage = one(gcTurn, 'turn.completed').data['usage'];
        assert.deepEqual(gcUsage, sum(gcTurn, 'llm.generation'));
        const childUsage = one(childTurn, 'turn.completed').data['usage'];
        assert.deepEqual(one(childTurn, 'tool.completed').data['usage'], gcUsage);
        const plus = (a: any, b: any) => ({
          input_tokens: a.input_tokens + b.input_tokens,
          output_tokens: a.output_tokens + b.output_tokens,
          cache_read_tokens: a.cache_read_tokens + b.cache_read_tokens,
        });
        assert.deepEqual(childUsage, plus(sum(childTurn, 'llm.generation'), gcUsage));
        assert.deepEqual(done.data['usage'], childUsage);
        const parentUsage = one(turn, 'turn.completed').data['usage'];
        assert.deepEqual(parentUsage, plus(sum(turn, 'llm.generation'), childUsage));
        assert.ok(parentUsage.input_tokens > sum(turn, 'llm.generation').input_tokens);
        // The session's cumulative usage (its first turn) holds the children's too.
        assert.deepEqual(one(turn, 'session.idled').data['usage'], parentUsage);
      });

      await t.test('too deep: the call past SUBAGENT_MAX_DEPTH is a clear tool error in the deepest session', async () => {
        const parent = await session(app, boss);
        const text = ask('kid', ask('gc', ask('gc', 'too deep')));
        assert.equal((await sendMessage(app, parent, text)).status, 201);
        const turn = await turnOf(app, parent);
        assert.equal(one(turn, 'tool.completed').data['success'], true);
        const child = one(turn, 'subagent.started').data['child_session_id'];
        const grandchild = one(await turnOf(app, child), 'subagent.started').data['child_session_id'];
        const refused = one(await turnOf(app, grandchild), 'tool.completed');
        assert.equal(refused.data['success'], false);
        assert.equal(refused.data['error'], 'Sub-agent limit reached: sub-agents nest at most 2 deep (SUBAGENT_MAX_DEPTH)');
        const sessions = (await app.request('GET', '/v1/sessions?limit=100')).body.data;
        assert.equal(sessions.filter((s: any) => s.parent_session_id === grandchild).length, 0, 'no session was created at depth 3');
      });

      await t.test('too many: a turn starts at most SUBAGENT_MAX_CHILDREN_PER_TURN children', async () => {
        const parent = await session(app, boss);
        const text = [ask('kid', 'one'), ask('kid', 'two'), ask('kid', 'three')].join('\n');
        assert.equal((await sendMessage(app, parent, text)).status, 201);
        const done = (await turnOf(app, parent)).filter((e) => e.type === 'tool.completed');
        assert.equal(done.length, 3);
        assert.equal(done.filter((e) => e.data['success']).length, 2, JSON.stringify(done.map((e) => e.data)));
        const refused = done.find((e) => !e.data['success'])!;
        assert.equal(
          refused.data['error'],
          'Sub-agent limit reached: a turn may start at most 2 sub-agent sessions (SUBAGENT_MAX_CHILDREN_PER_TURN)',
        );
        const sessions = (await app.request('GET', '/v1/sessions?limit=100')).body.data;
        assert.equal(sessions.filter((s: any) => s.parent_session_id === parent).length, 2);
      });

      await t.test("cancelling the parent's turn cancels the child's", async () => {
        const parent = await session(app, boss);
        assert.equal((await sendMessage(app, parent, ask('kid', '@sleep 30000\nslow'))).status, 201);
        const started = one(await waitForEvent(app, parent, 'subagent.started', { timeoutMs: 30_000 }), 'subagent.started');
        const child = started.data['child_session_id'];
        await waitForEvent(app, child, 'turn.started', { timeoutMs: 30_000 });
        const cancel = await app.request('POST', `/v1/sessions/${parent}/cancel`);
        assert.ok(cancel.status < 300, cancel.text);
        await waitForEvent(app, parent, 'session.idled', { timeoutMs: 30_000 });
        const childEvents = await waitForEvent(app, child, 'turn.cancelled', { timeoutMs: 30_000 });
        assert.equal(childEvents.filter((e) => e.type === 'turn.completed').length, 0, 'the child never completed its turn');
        await waitForEvent(app, child, 'session.idled', { timeoutMs: 30_000 });
        assert.equal((await app.request('GET', `/v1/sessions/${child}`)).body.status, 'idle');
      });

      await t.test('an agent not found is not offered; the log is whole', async () => {
        const parent = await session(app, boss);
        assert.equal((await sendMessage(app, parent, ask('no-such-agent', 'hi'))).status, 201);
        const done = one(await turnOf(app, parent), 'tool.completed');
        assert.equal(done.data['error'], 'Unknown tool: agent__no-such-agent');
        const all = await listEvents(app, parent);
        for (const [i, e] of all.entries()) assert.equal(e.sequence, i + 1);
      });
    });
  });
}
