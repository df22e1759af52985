import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { startTestApp } from '../helpers/app.js';
import { waitForEvent } from '../turns/helpers.js';
import { cliOk as ok, runCli } from './cli-run.js';
import { buildPackages } from './helpers.js';

/**
 * Messages while a turn runs from the command line (issue 26 item 3; decision 0097):
 * `messages send --on-busy`, `messages queue`, `messages unqueue`, `chat --on-busy enqueue`,
 * and the queued count in `sessions ls`. The built CLI against the embedded service.
 */
describe('agent-session messages (CLI): on_busy, the queue and its cancel', () => {
  before(() => buildPackages());

  it('send while busy: reject is 409, enqueue and interrupt queue; queue lists them in order; unqueue cancels; chat --on-busy enqueue waits for its turn', async (t) => {
    const app = await startTestApp(t, { mode: 'pglite' });
    const run = (...args: string[]) => runCli(app.url, app.adminKey, args);
    const agent = await app.request('POST', '/v1/agents', { body: { name: 'cli-queue', system_prompt: 'You help.' } });
    const session = await app.request('POST', '/v1/sessions', { body: { agent_id: agent.body.id } });
    const sid: string = session.body.id;

    // A turn of ~48 s that the test cancels once the queue is checked: seven CLI runs on a loaded
    // CI took longer than a turn of fixed length, and the queued message started before its unqueue.
    const first = await run('messages', 'send', sid, '@tokens 1200 delay=40\nslow');
    ok(first);
    assert.match(first.stdout, /^started [0-9a-f-]{36}\n$/);
    const refused = await run('messages', 'send', sid, 'too soon');
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(refused.stderr, /busy/i);
    const bad = await run('messages', 'send', sid, 'x', '--on-busy', 'later');
    assert.equal(bad.code, 2, 'a bad policy is a usage error');
    assert.match(bad.stderr, /--on-busy must be one of reject, enqueue, interrupt/);

    const a = await run('messages', 'send', sid, '@tokens 2\nqueued A', '--on-busy', 'enqueue');
    ok(a);
    const aId = /^queued ([0-9a-f-]{36}) \(position 1\)\n$/.exec(a.stdout)?.[1];
    assert.ok(aId, a.stdout);
    const b = await run('messages', 'send', sid, '@tokens 2\nqueued B', '--on-busy', 'enqueue', '--json');
    ok(b);
    const bView = JSON.parse(b.stdout);
    assert.deepEqual([bView.object, bView.status, bView.position, bView.on_busy], ['queued_message', 'queued', 2, 'enqueue']);

    const table = await run('messages', 'queue', sid);
    ok(table);
    const [header, ...rows] = table.stdout.trimEnd().split('\n');
    assert.match(header!, /^ID\s+POSITION\s+ON_BUSY\s+TEXT$/);
    assert.deepEqual(
      rows.map((r) => r.split(/\s{2,}/)),
      [
        [aId, '1', 'enqueue', '@tokens 2 queued A'],
        [bView.id, '2', 'enqueue', '@tokens 2 queued B'],
      ],
    );
    const sessions = await run('sessions', 'ls');
    assert.match(sessions.stdout, /^ID\s+TITLE\s+STATUS\s+QUEUED_MESSAGES/);
    assert.match(sessions.stdout, new RegExp(`${sid}\\s+active\\s+2\\s`));

    const cancelled = await run('messages', 'unqueue', sid, aId);
    ok(cancelled);
    assert.equal(cancelled.stdout, 'cancelled 1 queued message\n');
    const listed = JSON.parse((await run('messages', 'queue', sid, '--json')).stdout);
    assert.deepEqual(Object.keys(listed), ['data', 'total']);
    assert.deepEqual(
      listed.data.map((q: { id: string; position: number }) => [q.id, q.position]),
      [[bView.id, 1]],
    );
    const again = await run('messages', 'unqueue', sid, '019a0000-0000-7000-8000-0000000000ff');
    assert.equal(again.code, 1, 'an unknown queued id is refused');
    const cancelFirst = await app.request('POST', `/v1/sessions/${sid}/cancel`);
    assert.equal(cancelFirst.status, 200, cancelFirst.text);

    // chat --on-busy enqueue: its message waits behind B, then streams its own reply.
    const chat = await run('chat', sid, '--on-busy', 'enqueue', '-m', 'after everything');
    ok(chat);
    assert.equal(chat.stdout, 'after everything\n');

    // interrupt: the running turn is cancelled and this message runs next.
    ok(await run('messages', 'send', sid, '@tokens 300 delay=40\nlong again'));
    await waitForEvent(app, sid, 'turn.started', { n: 4 });
    const stop = await run('messages', 'send', sid, '@tokens 2\nstop', '--on-busy', 'interrupt');
    ok(stop);
    assert.match(stop.stdout, /^queued [0-9a-f-]{36} \(position 1\)\n$/);
    const idled = await waitForEvent(app, sid, 'session.idled', { n: 5, timeoutMs: 60_000 });
    const started = new Set(idled.filter((e) => e.type === 'turn.started').map((e) => e.data['input_message_id']));
    const texts = idled
      .filter((e) => e.type === 'input.message' && started.has(e.data['message'].id))
      .map((e) => e.data['message'].content[0].text);
    assert.deepEqual(texts, [
      '@tokens 1200 delay=40\nslow',
      '@tokens 2\nqueued B',
      'after everything',
      '@tokens 300 delay=40\nlong again',
      '@tokens 2\nstop',
    ]);
    assert.equal(idled.filter((e) => e.type === 'turn.cancelled').length, 2, 'the first turn by cancel, the long one by interrupt');
  });
});
