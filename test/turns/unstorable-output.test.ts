import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sharedTestApp, type TestApp } from '../helpers/app.js';
import { assertLogIntegrity, createSession, getSession, listEvents, sendMessage, waitForEvent, type StoredEvent } from './helpers.js';

/**
 * Model output and tool results reach PostgreSQL's jsonb as events: a NUL or a lone surrogate in
 * them made the store refuse every append of the step, and the turn was redelivered for ever with
 * the session `active` (issue 30). They are stored with U+FFFD instead, and the turn goes on.
 */

/** Sends `text` and waits for the turn it starts to leave the session idle; returns the turn's events. */
async function runTurn(app: TestApp, sessionId: string, text: string, n: number): Promise<StoredEvent[]> {
  const sent = await sendMessage(app, sessionId, text);
  assert.equal(sent.status, 201, sent.text);
  const events = await waitForEvent(app, sessionId, 'session.idled', { n, timeoutMs: 20_000 });
  const turnId = events.filter((e) => e.type === 'turn.started')[n - 1]!.data['turn_id'];
  return events.filter((e) => e.context['turn_id'] === turnId);
}

async function kvValue(app: TestApp, sessionId: string, key: string): Promise<string | undefined> {
  const r = await app.request('GET', `/v1/sessions/${sessionId}/storage/keys?include_values=true`);
  assert.equal(r.status, 200, r.text);
  return r.body.data.find((e: { key: string }) => e.key === key)?.value;
}

function outputText(events: StoredEvent[]): string {
  return events.filter((e) => e.type === 'output.message.completed').at(-1)!.data['message'].content[0].text;
}

for (const mode of ['pglite', 'postgres'] as const) {
  describe(`turns: model output and tool results PostgreSQL cannot store as they are (${mode})`, () => {
    const shared = sharedTestApp({ mode });
    it('a NUL in tool-call arguments is stored as U+FFFD: the turn completes, the session is idle and takes the next message', async () => {
      const app = shared();
      const { id } = await createSession(app, { capabilities: ['session_storage'] });
      const turn = await runTurn(app, id, '@tool kv_store {"operation":"set","key":"k","value":"a\\u0000b"}', 1);
      assert.equal(turn.at(-2)!.type, 'turn.completed', turn.map((e) => e.type).join(', '));
      const started = turn.find((e) => e.type === 'tool.started')!;
      assert.deepEqual(started.data['tool_call'].arguments, { operation: 'set', key: 'k', value: 'a\uFFFDb' });
      assert.equal(turn.find((e) => e.type === 'tool.completed')!.data['success'], true);
      assert.equal(await kvValue(app, id, 'k'), 'a\uFFFDb', 'the tool ran on the arguments as stored');
      assert.equal((await getSession(app, id)).status, 'idle');

      const next = await runTurn(app, id, 'hello again', 2);
      assert.equal(outputText(next), 'hello again');
      assertLogIntegrity(await listEvents(app, id));
    });

    it('lone surrogates in tool-call arguments and in the model text are stored as U+FFFD', async () => {
      const app = shared();
      const { id } = await createSession(app, { capabilities: ['session_storage'] });
      const lone = await runTurn(app, id, '@tool kv_store {"operation":"set","key":"lone","value":"x\\ud800y\\udc00"}', 1);
      assert.deepEqual(lone.find((e) => e.type === 'tool.started')!.data['tool_call'].arguments.value, 'x\uFFFDy\uFFFD');
      assert.equal(await kvValue(app, id, 'lone'), 'x\uFFFDy\uFFFD');

      // llmsim quotes the first 200 UTF-16 units of a tool result: an emoji placed across that
      // boundary leaves its high surrogate alone at the end of the model's text.
      const head = JSON.stringify({ key: 'emoji', found: true, value: '' }, null, 2);
      const value = `${'x'.repeat(199 - head.indexOf('""') - 1)}😀`;
      await runTurn(app, id, `@tool kv_store ${JSON.stringify({ operation: 'set', key: 'emoji', value })}`, 2);
      const read = await runTurn(app, id, '@tool kv_store {"operation":"get","key":"emoji"}', 3);
      const text = outputText(read);
      assert.ok(text.endsWith('xx\uFFFD'), JSON.stringify(text.slice(-20)));
      const deltas = read.filter((e) => e.type === 'output.message.delta');
      assert.ok(deltas.length > 0);
      assert.equal(deltas.at(-1)!.data['accumulated'], text);
      assert.equal(read.at(-2)!.type, 'turn.completed');
      assert.equal((await getSession(app, id)).status, 'idle');
      assertLogIntegrity(await listEvents(app, id));
    });
  });
}
