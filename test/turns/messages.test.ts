import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startTestApp } from '../helpers/app.js';
import { assertLogIntegrity, createSession, getSession, listEvents, sendMessage, typesOf, watch } from './helpers.js';

for (const mode of ['postgres', 'nats'] as const) {
  describe(`turns: messages (${mode})`, () => {
    it('POST messages - a plain reply: 201 with the input message, events in spec order over SSE', async (t) => {
      const app = await startTestApp(t, { mode });
      const { id } = await createSession(app);
      const sse = await watch(app, id);
      t.after(() => sse.close());

      const r = await sendMessage(app, id, 'Hello there');
      assert.equal(r.status, 201, r.text);
      assert.equal(r.body.role, 'user');
      assert.deepEqual(r.body.content, [{ type: 'text', text: 'Hello there' }]);
      assert.ok(r.body.id && r.body.created_at);

      const events = await sse.until('session.idled');
      const started = events.find((e) => e.type === 'turn.started')!;
      const turnId = started.data['turn_id'];
      assert.deepEqual(typesOf(events), [
        'session.created',
        'input.message',
        'session.started',
        'turn.started',
        'session.activated',
        'reason.started',
        'output.message.started',
        'output.message.delta',
        'output.message.completed',
        'llm.generation',
        'reason.completed',
        'turn.completed',
        'session.idled',
      ]);
      const input = events.find((e) => e.type === 'input.message')!;
      assert.deepEqual(input.data['message'], r.body);
      assert.equal(started.data['input_message_id'], r.body.id);
      for (const e of events.slice(1)) {
        assert.equal(e.context['turn_id'], turnId, `${e.type} context.turn_id`);
        assert.equal(e.context['input_message_id'], r.body.id, `${e.type} context.input_message_id`);
      }
      const completed = events.find((e) => e.type === 'output.message.completed')!;
      assert.equal(completed.data['message'].role, 'agent');
      assert.deepEqual(completed.data['message'].content, [{ type: 'text', text: 'Hello there' }]);
      assert.deepEqual(completed.data['metadata'], { model: 'llmsim', model_id: 'llmsim', provider_id: 'llmsim' });
      assert.equal(typeof completed.data['usage'].input_tokens, 'number');
      assert.equal(typeof completed.data['usage'].output_tokens, 'number');
      const delta = events.find((e) => e.type === 'output.message.delta')!;
      assert.deepEqual(delta.data, { turn_id: turnId, delta: 'Hello there', accumulated: 'Hello there' });
      const generation = events.find((e) => e.type === 'llm.generation')!;
      assert.deepEqual(generation.metadata!['usage'], completed.data['usage'] && generation.data['usage']);
      const done = events.find((e) => e.type === 'turn.completed')!;
      assert.equal(done.data['turn_id'], turnId);
      assert.equal(done.data['iterations'], 1);
      assert.ok(done.data['duration_ms'] >= 0);
      const idled = events.find((e) => e.type === 'session.idled')!;
      assert.equal(idled.data['turn_id'], turnId);
      assert.equal(idled.data['iterations'], 1);
      assert.deepEqual(idled.data['usage'], generation.metadata!['usage']);

      assert.equal((await getSession(app, id)).status, 'idle');
      assertLogIntegrity(await listEvents(app, id));
    });

    it('POST messages - the second turn: no session.started, cumulative usage in session.idled', async (t) => {
      const app = await startTestApp(t, { mode });
      const { id } = await createSession(app);
      const sse = await watch(app, id);
      t.after(() => sse.close());
      assert.equal((await sendMessage(app, id, 'one')).status, 201);
      await sse.until('session.idled');
      const second = await sendMessage(app, id, 'two');
      assert.equal(second.status, 201, second.text);
      const events = await sse.until('session.idled', 2);
      assert.equal(events.filter((e) => e.type === 'session.started').length, 1);
      const [g1, g2] = events.filter((e) => e.type === 'llm.generation');
      const idled = events.filter((e) => e.type === 'session.idled')[1]!;
      for (const k of ['input_tokens', 'output_tokens', 'cache_read_tokens']) {
        assert.equal(idled.data['usage'][k], g1!.metadata!['usage'][k] + g2!.metadata!['usage'][k], k);
      }
      // The second call saw the first exchange: its prompt is longer.
      assert.ok(g2!.metadata!['usage'].input_tokens > g1!.metadata!['usage'].input_tokens);
      assertLogIntegrity(await listEvents(app, id));
    });
  });
}
