import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startTestApp } from '../helpers/app.js';
import { assertLogIntegrity, createSession, getSession, listEvents, sendMessage, typesOf, waitForEvent, watch } from './helpers.js';
import { LOCAL_WEB_FETCH, LOCAL_WEB_FETCH_ENV, startSlowServer } from './slow-server.js';

const CANCEL_TAIL = ['turn.cancelled', 'input.message', 'output.message.completed', 'session.idled'];

for (const mode of ['postgres', 'nats'] as const) {
  describe(`turns: busy and cancel (${mode})`, () => {
    it('50 concurrent POST messages: exactly one 201, 49 × 409 Session is busy, one turn in the log', async (t) => {
      const app = await startTestApp(t, { mode });
      const { id } = await createSession(app);
      const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => sendMessage(app, id, `@tokens 20 delay=50\nmessage ${i}`)));
      const created = answers.filter((r) => r.status === 201);
      const busy = answers.filter((r) => r.status === 409);
      assert.equal(created.length, 1, answers.map((r) => r.status).join(','));
      assert.equal(busy.length, 49);
      for (const r of busy) assert.deepEqual(r.body, { error: 'Session is busy', status: 409 });
      // While it runs: still busy.
      assert.equal((await sendMessage(app, id, 'again')).status, 409);
      const events = await waitForEvent(app, id, 'session.idled');
      assert.equal(events.filter((e) => e.type === 'input.message').length, 1);
      assert.equal(events.filter((e) => e.type === 'turn.started').length, 1);
      assert.equal(events.find((e) => e.type === 'input.message')!.data['message'].id, created[0]!.body.id);
      assertLogIntegrity(events);
      // Idle again: the next message is accepted.
      assert.equal((await sendMessage(app, id, 'next')).status, 201);
      await waitForEvent(app, id, 'session.idled', { n: 2 });
    });

    it('cancel while the LLM streams: stream aborted, spec 3.2 order, session idle', async (t) => {
      const app = await startTestApp(t, { mode });
      const { id } = await createSession(app);
      const sse = await watch(app, id);
      t.after(() => sse.close());
      assert.equal((await sendMessage(app, id, '@tokens 200 delay=20')).status, 201);
      await sse.until('output.message.delta');
      const started = Date.now();
      const r = await app.request('POST', `/v1/sessions/${id}/cancel`);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.status, 'cancelled');
      const events = await sse.until('session.idled');
      assert.ok(Date.now() - started < 3000, 'the 4 s stream was not aborted');
      const types = typesOf(events).filter((x) => x !== 'output.message.delta');
      assert.deepEqual(types.slice(-4), CANCEL_TAIL);
      assert.equal(types.includes('turn.completed'), false);
      const cancelled = events.find((e) => e.type === 'turn.cancelled')!;
      assert.equal(cancelled.data['turn_id'], events.find((e) => e.type === 'turn.started')!.data['turn_id']);
      assert.equal(cancelled.data['reason'], 'user_requested');
      assert.ok(cancelled.data['usage']);
      const cancelInput = events.filter((e) => e.type === 'input.message')[1]!;
      assert.deepEqual(cancelInput.data['message'].content, [{ type: 'text', text: 'User requested to cancel the work.' }]);
      const closing = events.filter((e) => e.type === 'output.message.completed').at(-1)!;
      assert.deepEqual(closing.data['message'].content, [{ type: 'text', text: 'Work was cancelled by user.' }]);
      const lastDelta = events.filter((e) => e.type === 'output.message.delta').at(-1)!;
      assert.ok(lastDelta.data['accumulated'].split(' ').length < 200);
      assert.equal((await getSession(app, id)).status, 'idle');
      const again = await app.request('POST', `/v1/sessions/${id}/cancel`);
      assert.deepEqual(again.body, { error: 'Cannot cancel session: session is not active', status: 422 });
      assertLogIntegrity(await listEvents(app, id));
      // The conversation goes on.
      assert.equal((await sendMessage(app, id, 'after')).status, 201);
      await sse.until('session.idled', 2);
    });

    it('cancel while tools run: the tool is aborted and gets a cancelled result, then the cancellation closes the turn', async (t) => {
      const server = await startSlowServer();
      t.after(() => server.close());
      const app = await startTestApp(t, { mode, env: LOCAL_WEB_FETCH_ENV });
      const { id } = await createSession(app, { capabilities: [LOCAL_WEB_FETCH] });
      const sse = await watch(app, id);
      t.after(() => sse.close());
      assert.equal((await sendMessage(app, id, `@tool fetch_url {"url":"${server.url}/slow?ms=8000&id=c"}`)).status, 201);
      await sse.until('tool.started');
      const started = Date.now();
      assert.equal((await app.request('POST', `/v1/sessions/${id}/cancel`)).status, 200);
      const events = await sse.until('session.idled');
      assert.ok(Date.now() - started < 4000, 'the running tool was not aborted');
      const turnTypes = typesOf(events);
      assert.deepEqual(turnTypes.slice(-6), [
        'turn.cancelled',
        'input.message',
        'tool.completed',
        'act.completed',
        'output.message.completed',
        'session.idled',
      ]);
      const result = events.find((e) => e.type === 'tool.completed')!;
      assert.equal(result.data['success'], false);
      assert.equal(result.data['status'], 'error');
      assert.equal(result.context['exec_id'], events.find((e) => e.type === 'tool.started')!.context['exec_id']);
      assert.equal((await getSession(app, id)).status, 'idle');
      assertLogIntegrity(await listEvents(app, id));
    });

    it('cancel while the turn waits for its claim (no worker yet): a worker that starts later only closes it', async (t) => {
      const api = await startTestApp(t, { mode, env: { ROLE: 'api' } });
      const { id } = await createSession(api);
      assert.equal((await sendMessage(api, id, 'never answered')).status, 201);
      assert.equal((await getSession(api, id)).status, 'active');
      const r = await api.request('POST', `/v1/sessions/${id}/cancel`);
      assert.equal(r.status, 200);
      const twice = await api.request('POST', `/v1/sessions/${id}/cancel`);
      assert.equal(twice.body.status, 'no_op');
      await startTestApp(t, { mode, databaseUrl: api.databaseUrl, natsUrl: api.natsUrl, env: { ROLE: 'worker' } });
      const events = await waitForEvent(api, id, 'session.idled');
      assert.deepEqual(typesOf(events), [
        'session.created',
        'input.message',
        'session.started',
        'turn.started',
        'session.activated',
        ...CANCEL_TAIL,
      ]);
      assert.equal((await getSession(api, id)).status, 'idle');
      assertLogIntegrity(events);
    });

    it('cancel on a session that is not active: 422', async (t) => {
      const app = await startTestApp(t, { mode });
      const { id } = await createSession(app);
      const r = await app.request('POST', `/v1/sessions/${id}/cancel`);
      assert.deepEqual(r.body, { error: 'Cannot cancel session: session is not active', status: 422 });
    });
  });
}
