import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startTestApp } from '../helpers/app.js';
import { assertLogIntegrity, createSession, getSession, listEvents, sendMessage, typesOf, watch } from './helpers.js';
import { LOCAL_WEB_FETCH, LOCAL_WEB_FETCH_ENV, startSlowServer } from './slow-server.js';

const REASON = [
  'reason.started',
  'output.message.started',
  'output.message.delta',
  'output.message.completed',
  'llm.generation',
  'reason.completed',
];
const REASON_NO_TEXT = ['reason.started', 'output.message.started', 'output.message.completed', 'llm.generation', 'reason.completed'];

for (const mode of ['postgres', 'nats'] as const) {
  describe(`turns: tools (${mode})`, () => {
    it('one tool: act.started, tool.started (exec_id), tool.completed, act.completed, then a second reason step', async (t) => {
      const app = await startTestApp(t, { mode });
      const { id } = await createSession(app, { capabilities: ['current_time'] });
      const sse = await watch(app, id);
      t.after(() => sse.close());
      assert.equal((await sendMessage(app, id, '@tool get_current_time {"timezone":"UTC"}')).status, 201);
      const events = await sse.until('session.idled');
      const turnId = events.find((e) => e.type === 'turn.started')!.data['turn_id'];
      assert.deepEqual(typesOf(events, turnId).slice(4), [
        ...REASON_NO_TEXT,
        'act.started',
        'tool.started',
        'tool.completed',
        'act.completed',
        ...REASON,
        'turn.completed',
        'session.idled',
      ]);
      const requested = events.find((e) => e.type === 'output.message.completed')!.data['message'].content;
      assert.deepEqual(requested, [{ type: 'tool_call', id: requested[0]!.id, name: 'get_current_time', arguments: { timezone: 'UTC' } }]);
      const started = events.find((e) => e.type === 'tool.started')!;
      assert.deepEqual(started.data, {
        tool_call: { id: requested[0]!.id, name: 'get_current_time', arguments: { timezone: 'UTC' } },
        display_name: 'Get Current Time',
      });
      assert.ok(started.context['exec_id']);
      const completed = events.find((e) => e.type === 'tool.completed')!;
      assert.equal(completed.context['exec_id'], started.context['exec_id']);
      assert.equal(completed.data['tool_call_id'], requested[0]!.id);
      assert.equal(completed.data['tool_name'], 'get_current_time');
      assert.equal(completed.data['display_name'], 'Get Current Time');
      assert.equal(completed.data['success'], true);
      assert.equal(completed.data['status'], 'success');
      assert.equal(completed.data['result'][0].type, 'text');
      assert.match(completed.data['result'][0].text, /"utc"/);
      assert.deepEqual(events.find((e) => e.type === 'act.completed')!.data, { turn_id: turnId, iteration: 1, succeeded: 1, failed: 0 });
      const reply = events.filter((e) => e.type === 'output.message.completed')[1]!;
      assert.match(reply.data['message'].content[0].text, /^Received 1 tool result/);
      assert.equal(events.find((e) => e.type === 'turn.completed')!.data['iterations'], 2);
      assertLogIntegrity(await listEvents(app, id));
    });

    it('parallel tools: 12 requested, at most 10 run at once, every call paired with its result', async (t) => {
      const server = await startSlowServer();
      t.after(() => server.close());
      const app = await startTestApp(t, { mode, env: LOCAL_WEB_FETCH_ENV });
      const { id } = await createSession(app, { capabilities: [LOCAL_WEB_FETCH] });
      const lines = Array.from({ length: 12 }, (_, i) => `@tool fetch_url {"url":"${server.url}/slow?ms=400&id=p${i}"}`);
      const sse = await watch(app, id);
      t.after(() => sse.close());
      assert.equal((await sendMessage(app, id, lines.join('\n'))).status, 201);
      const events = await sse.until('session.idled', 1, 30_000);
      assert.equal(server.maxInFlight, 10, `max concurrent tool calls was ${server.maxInFlight}`);
      const calls = events.find((e) => e.type === 'output.message.completed')!.data['message'].content.map((p: { id: string }) => p.id);
      assert.equal(calls.length, 12);
      const completed = events.filter((e) => e.type === 'tool.completed');
      assert.deepEqual(completed.map((e) => e.data['tool_call_id']).sort(), [...calls].sort());
      assert.ok(
        completed.every((e) => e.data['success'] === true),
        JSON.stringify(completed.map((e) => e.data['error'])),
      );
      assert.equal(events.filter((e) => e.type === 'tool.started').length, 12);
      for (let i = 0; i < 12; i++) assert.equal(server.hits.get(`p${i}`), 1);
      assertLogIntegrity(await listEvents(app, id));
    });

    it('a failing tool: tool.completed success false with a short message; the turn goes on', async (t) => {
      const app = await startTestApp(t, { mode });
      const { id } = await createSession(app, { capabilities: ['current_time'] });
      const sse = await watch(app, id);
      t.after(() => sse.close());
      const text = ['@tool get_current_time {"timezone":"Nope/Zone"}', '@tool no_such_tool {}'].join('\n');
      assert.equal((await sendMessage(app, id, text)).status, 201);
      const events = await sse.until('session.idled');
      const results = events.filter((e) => e.type === 'tool.completed');
      const bad = results.find((e) => e.data['tool_name'] === 'get_current_time');
      const unknown = results.find((e) => e.data['tool_name'] === 'no_such_tool');
      assert.equal(bad!.data['success'], false);
      assert.equal(bad!.data['status'], 'error');
      assert.match(bad!.data['error'], /Unknown time zone "Nope\/Zone"/);
      assert.equal(bad!.data['result'], undefined);
      assert.equal(unknown!.data['success'], false);
      assert.equal(unknown!.data['error'], 'Unknown tool: no_such_tool');
      assert.deepEqual(events.find((e) => e.type === 'act.completed')!.data['failed'], 2);
      assert.ok(events.some((e) => e.type === 'turn.completed'));
      assert.match(events.filter((e) => e.type === 'output.message.completed')[1]!.data['message'].content[0].text, /\(error\)/);
    });

    it('max_iterations from the agent: turn.failed error_code max_iterations after that many steps, then session.idled', async (t) => {
      const app = await startTestApp(t, { mode });
      const { id } = await createSession(app, { capabilities: ['current_time'], max_iterations: 3 });
      const sse = await watch(app, id);
      t.after(() => sse.close());
      assert.equal((await sendMessage(app, id, '@loop get_current_time {}')).status, 201);
      const events = await sse.until('session.idled');
      const failed = events.find((e) => e.type === 'turn.failed')!;
      assert.equal(failed.data['error_code'], 'max_iterations');
      assert.equal(failed.data['iterations'], 3);
      assert.equal(typeof failed.data['error'], 'string');
      assert.equal(events.filter((e) => e.type === 'reason.started').length, 3);
      assert.equal(events.filter((e) => e.type === 'act.completed').length, 3);
      assert.deepEqual(typesOf(events).slice(-2), ['turn.failed', 'session.idled']);
      assert.equal(
        events.some((e) => e.type === 'turn.completed'),
        false,
      );
      assert.equal((await getSession(app, id)).status, 'idle');
    });

    it('llm_error: turn.failed error_code llm_error with a generic message, then session.idled; the session takes the next message', async (t) => {
      const app = await startTestApp(t, { mode });
      const { id } = await createSession(app);
      const sse = await watch(app, id);
      t.after(() => sse.close());
      assert.equal((await sendMessage(app, id, '@fail bad_request')).status, 201);
      let events = await sse.until('session.idled');
      const failed = events.find((e) => e.type === 'turn.failed')!;
      assert.equal(failed.data['error_code'], 'llm_error');
      assert.equal(failed.data['error'], 'LLM provider rejected the request');
      assert.deepEqual(typesOf(events).slice(-5), [
        'session.activated',
        'reason.started',
        'output.message.started',
        'turn.failed',
        'session.idled',
      ]);

      // Cut mid-stream: the deltas already sent stay, the failure follows them.
      assert.equal((await sendMessage(app, id, '@tokens 5\n@fail network after=3')).status, 201);
      events = await sse.until('session.idled', 2);
      const second = events.filter((e) => e.type === 'turn.failed')[1]!;
      assert.equal(second.data['error_code'], 'llm_error');
      assert.equal(second.data['error'], 'LLM provider could not be reached');
      assert.equal((await getSession(app, id)).status, 'idle');
      assertLogIntegrity(await listEvents(app, id));
    });
  });
}
