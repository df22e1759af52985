import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sendAndWait, type SessionEvent } from '@agent-session-service/client';
import { startTestApp } from '../helpers/app.js';
import { clientOf, newSession } from './helpers.js';

const ASK_USER = {
  type: 'client',
  name: 'ask_user',
  description: 'Ask the user a question in the client UI.',
  parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
};

describe('client: turn helpers', () => {
  it('sendAndWait: the reply, thinking and exactly the events of this turn, in order', async (t) => {
    const app = await startTestApp(t);
    const client = clientOf(app);
    const sid = await newSession(client);
    const first = await client.sessions.sendAndWait(sid, 'hello there');
    assert.equal(first.status, 'completed');
    assert.equal(first.reply, 'hello there');
    const seen: string[] = [];
    const second = await sendAndWait(client, sid, '@think 2\nsecond message', { onEvent: (e) => seen.push(e.type), timeoutMs: 20_000 });
    assert.equal(second.reply, 'second message');
    assert.equal(second.thinking, 'thought1 thought2');
    assert.deepEqual(
      second.events.map((e) => e.type),
      seen,
    );
    assert.equal(second.events[0]!.type, 'input.message');
    assert.equal(second.events.at(-1)!.type, 'session.idled');
    assert.ok(
      second.events.every((e) => e.context.input_message_id === second.message.id),
      'no event of the first turn',
    );
    const deltas = second.events.filter(
      (e): e is Extract<SessionEvent, { type: 'output.message.delta' }> => e.type === 'output.message.delta',
    );
    assert.equal(deltas.map((d) => d.data.delta).join(''), 'second message');
    assert.equal(second.turnId, second.events.find((e) => e.type === 'turn.started')!.data.turn_id);
  });

  it('sendAndWait: a failed turn reports its error code', async (t) => {
    const app = await startTestApp(t);
    const client = clientOf(app);
    const sid = await newSession(client);
    const result = await client.sessions.sendAndWait(sid, '@fail auth');
    assert.equal(result.status, 'failed');
    assert.equal(result.error?.code, 'llm_error');
  });

  it('client tool loop: handlers answer tool.call_requested and the turn resumes; without one the turn waits', async (t) => {
    const app = await startTestApp(t);
    const client = clientOf(app);
    const sid = await newSession(client, [ASK_USER]);
    const asked: unknown[] = [];
    const result = await client.sessions.sendAndWait(sid, '@tool ask_user {"q":"favourite colour?"}', {
      tools: { ask_user: (args) => (asked.push(args), { colour: 'blue' }) },
    });
    assert.deepEqual(asked, [{ q: 'favourite colour?' }]);
    assert.equal(result.status, 'completed');
    assert.match(result.reply, /ask_user: \{"colour":"blue"\}/);
    assert.ok(result.events.some((e) => e.type === 'tool.completed' && e.data.success && e.data.tool_name === 'ask_user'));

    const waiting = await client.sessions.sendAndWait(sid, '@tool ask_user {"q":"size?"}');
    assert.equal(waiting.status, 'waiting_for_tool_results');
    assert.equal(waiting.pendingToolCalls?.[0]?.name, 'ask_user');
    // The request event is stored just before the row moves to waiting (the client's submit
    // retries that moment's 409 itself); the row gets there within moments.
    let status = (await client.sessions.get(sid)).status;
    for (const until = Date.now() + 5_000; status === 'active' && Date.now() < until; ) {
      await new Promise((r) => setTimeout(r, 20));
      status = (await client.sessions.get(sid)).status;
    }
    assert.equal(status, 'waiting_for_tool_results');
    await client.sessions.submitToolResults(sid, [{ tool_call_id: waiting.pendingToolCalls![0]!.id, result: 'large' }]);

    // serveClientTools: messages sent elsewhere, calls answered by the loop.
    const ac = new AbortController();
    const serving = client.sessions.serveClientTools(
      sid,
      {
        ask_user: () => {
          throw new Error('user closed the dialog');
        },
      },
      { signal: ac.signal },
    );
    await new Promise((r) => setTimeout(r, 200));
    const since = await client.sessions.lastEventId(sid);
    const sent = await client.sessions.sendMessage(sid, '@tool ask_user {"q":"again?"}');
    const watcher = client.sessions.stream(sid, { since });
    for await (const e of watcher) if (e.type === 'session.idled' && e.context.input_message_id === sent.id) break;
    ac.abort();
    assert.equal(await serving, 1);
    const events = (await client.sessions.events(sid, {})).data;
    const failed = events.filter((e) => e.type === 'tool.completed' && e.context.input_message_id === sent.id);
    assert.equal(failed.length, 1);
    const completed = failed[0]!;
    assert.equal(
      completed.type === 'tool.completed' && completed.data.success === false ? completed.data.error : undefined,
      'user closed the dialog',
    );
  });
});
