import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startTestApp } from '../../helpers/app.js';
import { openSse } from '../../helpers/sse-client.js';
import { createSession, listEvents, sendMessage, waitForEvent, waitForStatus, type StoredEvent } from '../../turns/helpers.js';

const TOOL_TAGS = ['tool:get_current_time', 'capability:current_time'];

for (const mode of ['postgres', 'nats'] as const) {
  describe(`events: tags (${mode})`, () => {
    it('a turn carries its message tags, tool events their tool and capability; listing and SSE filter by tag (any of)', async (t) => {
      const app = await startTestApp(t, { mode });
      const { id } = await createSession(app, { capabilities: ['current_time'] });
      const tagged = await app.request('POST', `/v1/sessions/${id}/messages`, {
        body: { message: { content: [{ type: 'text', text: '@tool get_current_time {}' }], tags: ['alpha', 'beta', 'alpha'] } },
      });
      assert.equal(tagged.status, 201, tagged.text);
      assert.deepEqual(tagged.body.tags, ['alpha', 'beta']);
      await waitForEvent(app, id, 'session.idled');
      assert.equal((await sendMessage(app, id, 'untagged')).status, 201);
      const all = await waitForEvent(app, id, 'session.idled', { n: 2 });

      const firstTurn = all.find((e) => e.type === 'turn.started')!.data['turn_id'];
      const turn1 = all.filter((e) => e.context['turn_id'] === firstTurn);
      assert.ok(turn1.length > 8);
      for (const e of turn1) assert.deepEqual(e.tags?.slice(0, 2), ['alpha', 'beta'], `${e.type} carries the message tags`);
      const started = turn1.find((e) => e.type === 'tool.started')!;
      const completed = turn1.find((e) => e.type === 'tool.completed')!;
      assert.deepEqual(started.tags, ['alpha', 'beta', ...TOOL_TAGS]);
      assert.deepEqual(completed.tags, ['alpha', 'beta', ...TOOL_TAGS]);
      assert.deepEqual(turn1.find((e) => e.type === 'act.started')!.tags, ['alpha', 'beta', ...TOOL_TAGS]);
      const turn2 = all.filter((e) => e.context['turn_id'] && e.context['turn_id'] !== firstTurn);
      for (const e of turn2) assert.deepEqual(e.tags, [], `${e.type} of an untagged turn without tools carries tags: []`);
      for (const e of all.filter((x) => !x.context['turn_id'])) assert.deepEqual(e.tags, [], `${e.type} outside a turn carries tags: []`);

      const byTag = async (query: string): Promise<StoredEvent[]> => {
        const r = await app.request('GET', `/v1/sessions/${id}/events?${query}`);
        assert.equal(r.status, 200, r.text);
        return r.body.data;
      };
      const toolEvents = await byTag('tags=capability:current_time');
      assert.deepEqual(
        toolEvents.map((e) => e.type),
        ['act.started', 'tool.started', 'tool.completed'],
      );
      assert.deepEqual(
        (await byTag('tags=nope,alpha')).map((e) => e.id),
        turn1.map((e) => e.id),
        'comma-separated: any of them',
      );
      assert.deepEqual(
        (await byTag('tags=nope&tags=beta')).map((e) => e.id),
        turn1.map((e) => e.id),
        'repeated keys too',
      );
      assert.deepEqual(await byTag('tags=nope'), []);
      assert.deepEqual(
        (await byTag('tags=alpha&types=tool.completed')).map((e) => e.id),
        [completed.id],
        'types and tags combine',
      );

      const sse = await openSse(`${app.url}/v1/sessions/${id}/sse?tags=tool:get_current_time`, { key: app.adminKey });
      t.after(() => sse.close());
      assert.equal(sse.status, 200);
      await sse.waitFor((e) => e.event === 'tool.completed');
      await new Promise((r) => setTimeout(r, 200));
      assert.deepEqual(
        sse.events.filter((e) => e.event !== 'connected').map((e) => e.event),
        ['act.started', 'tool.started', 'tool.completed'],
      );
      const untagged = await openSse(`${app.url}/v1/sessions/${id}/sse?types=session.created`, { key: app.adminKey });
      t.after(() => untagged.close());
      const [created] = await untagged.waitFor((e) => e.event === 'session.created');
      assert.deepEqual(JSON.parse(created!.data).tags, [], 'SSE frames carry tags: [] too');
    });

    it('client tool events are tagged client_tool; the message tags survive the resume after results and a cancel', async (t) => {
      const app = await startTestApp(t, { mode });
      const askUser = { type: 'client', name: 'ask_user', description: 'Ask the user.', parameters: { type: 'object', properties: {} } };
      const { id } = await createSession(app, { client_tools: [askUser] });
      const send = (text: string, tags: string[]) =>
        app.request('POST', `/v1/sessions/${id}/messages`, { body: { message: { content: [{ type: 'text', text }], tags } } });
      assert.equal((await send('@tool ask_user {}', ['gamma'])).status, 201);
      const asked = await waitForEvent(app, id, 'tool.call_requested');
      const callId = asked.find((e) => e.type === 'tool.call_requested')!.data['tool_calls'][0].id;
      await waitForStatus(app, id, 'waiting_for_tool_results');
      const r = await app.request('POST', `/v1/sessions/${id}/tool-results`, {
        body: { tool_results: [{ tool_call_id: callId, result: 'blue' }] },
      });
      assert.equal(r.status, 200, r.text);
      let events = await waitForEvent(app, id, 'session.idled');
      const clientTags = ['gamma', 'tool:ask_user', 'client_tool'];
      assert.deepEqual(events.find((e) => e.type === 'tool.call_requested')!.tags, clientTags);
      assert.deepEqual(events.find((e) => e.type === 'tool.completed')!.tags, clientTags, 'the result stored by the API');
      const resumed = events.slice(events.findIndex((e) => e.type === 'tool.completed'));
      assert.ok(resumed.length > 3);
      for (const e of resumed) assert.equal(e.tags?.[0], 'gamma', `${e.type} after the resume`);

      assert.equal((await send('@sleep 5000', ['delta'])).status, 201);
      await waitForEvent(app, id, 'reason.started', { n: 3 });
      assert.equal((await app.request('POST', `/v1/sessions/${id}/cancel`)).status, 200);
      events = await waitForEvent(app, id, 'session.idled', { n: 2 });
      const cancelled = events.find((e) => e.type === 'turn.cancelled')!;
      assert.deepEqual(cancelled.tags, ['delta']);
      assert.deepEqual(events.filter((e) => e.type === 'input.message').at(-1)!.tags, ['delta'], "the cancel's input message");
      assert.deepEqual(events.at(-1)!.tags, ['delta']);
    });

    it('message tags are bounded: more than 20, empty, over 128 characters or with a comma → 400, nothing appended', async (t) => {
      const app = await startTestApp(t, { mode });
      const { id } = await createSession(app);
      const before = (await listEvents(app, id)).length;
      for (const tags of [Array.from({ length: 21 }, (_, i) => `t${i}`), [''], ['x'.repeat(129)], ['a,b'], ['a\nb']]) {
        const r = await app.request('POST', `/v1/sessions/${id}/messages`, {
          body: { message: { content: [{ type: 'text', text: 'hi' }], tags } },
        });
        assert.equal(r.status, 400, JSON.stringify(tags));
        assert.equal(r.body.error.startsWith('Invalid request'), true);
      }
      assert.equal((await listEvents(app, id)).length, before);
    });
  });
}
