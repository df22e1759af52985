import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startTestApp } from '../helpers/app.js';
import { assertLogIntegrity, createSession, getSession, listEvents, sendMessage, typesOf, waitForStatus, watch } from './helpers.js';

const ASK_USER = {
  type: 'client',
  name: 'ask_user',
  description: 'Ask the user a question in the client UI.',
  parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
};

for (const mode of ['postgres', 'nats'] as const) {
  describe(`turns: client tools (${mode})`, () => {
    it('round trip: tool.call_requested, waiting_for_tool_results, server tools of the step still run, results resume the turn', async (t) => {
      const app = await startTestApp(t, { mode });
      const { id } = await createSession(app, { capabilities: ['current_time'], client_tools: [ASK_USER] });
      const sse = await watch(app, id);
      t.after(() => sse.close());
      const text = ['@tool ask_user {"q":"favourite colour?"}', '@tool get_current_time {}'].join('\n');
      assert.equal((await sendMessage(app, id, text)).status, 201);

      let events = await sse.until('tool.call_requested');
      const requested = events.find((e) => e.type === 'tool.call_requested')!;
      const callId = requested.data['tool_calls'][0].id;
      assert.deepEqual(requested.data, { tool_calls: [{ id: callId, name: 'ask_user', arguments: { q: 'favourite colour?' } }] });
      events = await sse.until('tool.completed');
      assert.equal(events.find((e) => e.type === 'tool.completed')!.data['tool_name'], 'get_current_time');
      await waitForStatus(app, id, 'waiting_for_tool_results');

      // Only tool results are accepted now.
      const busy = await sendMessage(app, id, 'hello?');
      assert.equal(busy.status, 409);
      const unknown = await app.request('POST', `/v1/sessions/${id}/tool-results`, {
        body: { tool_results: [{ tool_call_id: 'nope', result: 1 }] },
      });
      assert.equal(unknown.status, 400);
      const r = await app.request('POST', `/v1/sessions/${id}/tool-results`, {
        body: { tool_results: [{ tool_call_id: callId, result: { colour: 'blue' } }] },
      });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.accepted, 1);
      assert.ok(['active', 'idle'].includes(r.body.status), r.body.status);

      events = await sse.until('session.idled');
      const turnId = events.find((e) => e.type === 'turn.started')!.data['turn_id'];
      const results = events.filter((e) => e.type === 'tool.completed');
      const client = results.find((e) => e.data['tool_call_id'] === callId)!;
      assert.equal(client.data['success'], true);
      assert.deepEqual(client.data['result'], [{ type: 'text', text: '{"colour":"blue"}' }]);
      assert.equal(client.context['turn_id'], turnId);
      const types = typesOf(events, turnId);
      const ask = types.indexOf('tool.call_requested');
      assert.ok(ask > types.indexOf('act.started'));
      assert.deepEqual(types.slice(-4), ['llm.generation', 'reason.completed', 'turn.completed', 'session.idled']);
      const reply = events.filter((e) => e.type === 'output.message.completed').at(-1)!;
      assert.match(reply.data['message'].content[0].text, /Received 2 tool results/);
      assert.match(reply.data['message'].content[0].text, /ask_user: \{"colour":"blue"\}/);
      assert.equal((await getSession(app, id)).status, 'idle');

      const late = await app.request('POST', `/v1/sessions/${id}/tool-results`, {
        body: { tool_results: [{ tool_call_id: callId, result: 'x' }] },
      });
      assert.equal(late.status, 409);
      assertLogIntegrity(await listEvents(app, id));
    });

    it('several client calls: the turn waits until every one has a result (errors count as results)', async (t) => {
      const app = await startTestApp(t, { mode });
      const { id } = await createSession(app, { client_tools: [ASK_USER] });
      const sse = await watch(app, id);
      t.after(() => sse.close());
      assert.equal((await sendMessage(app, id, '@tool ask_user {"q":"a"}\n@tool ask_user {"q":"b"}')).status, 201);
      const events = await sse.until('tool.call_requested');
      const [a, b] = events.find((e) => e.type === 'tool.call_requested')!.data['tool_calls'].map((c: { id: string }) => c.id);
      await waitForStatus(app, id, 'waiting_for_tool_results');
      const first = await app.request('POST', `/v1/sessions/${id}/tool-results`, {
        body: { tool_results: [{ tool_call_id: a, result: 'yes' }] },
      });
      assert.deepEqual(first.body, { accepted: 1, status: 'waiting_for_tool_results' });
      const again = await app.request('POST', `/v1/sessions/${id}/tool-results`, {
        body: { tool_results: [{ tool_call_id: a, result: 'dup' }] },
      });
      assert.deepEqual(again.body, { accepted: 0, status: 'waiting_for_tool_results' });
      const second = await app.request('POST', `/v1/sessions/${id}/tool-results`, {
        body: { tool_results: [{ tool_call_id: b, error: 'user closed the dialog' }] },
      });
      assert.equal(second.body.accepted, 1);
      const done = await sse.until('session.idled');
      const failed = done.filter((e) => e.type === 'tool.completed').find((e) => e.data['tool_call_id'] === b)!;
      assert.equal(failed.data['success'], false);
      assert.equal(failed.data['error'], 'user closed the dialog');
      assert.equal(done.filter((e) => e.type === 'tool.completed').length, 2);
    });

    it('cancel while waiting for client results: the open call gets a cancelled result and the session goes idle', async (t) => {
      const app = await startTestApp(t, { mode });
      const { id } = await createSession(app, { client_tools: [ASK_USER] });
      const sse = await watch(app, id);
      t.after(() => sse.close());
      assert.equal((await sendMessage(app, id, '@tool ask_user {"q":"a"}')).status, 201);
      await sse.until('tool.call_requested');
      await waitForStatus(app, id, 'waiting_for_tool_results');
      assert.equal((await app.request('POST', `/v1/sessions/${id}/cancel`)).status, 200);
      const events = await sse.until('session.idled');
      assert.deepEqual(typesOf(events).slice(-6), [
        'turn.cancelled',
        'input.message',
        'tool.completed',
        'act.completed',
        'output.message.completed',
        'session.idled',
      ]);
      assert.equal(events.find((e) => e.type === 'tool.completed')!.data['success'], false);
      assert.equal((await getSession(app, id)).status, 'idle');
      const late = await app.request('POST', `/v1/sessions/${id}/tool-results`, {
        body: { tool_results: [{ tool_call_id: 'x', result: 1 }] },
      });
      assert.equal(late.status, 409);
    });
  });
}
