import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import { startTestApp, type TestApp, type TestMode } from '../../helpers/app.js';
import { getSession, listEvents, waitForEvent } from '../../turns/helpers.js';
import { connect, createAgent, newestSession, textOf } from './helpers.js';

/**
 * `/v1/mcp` (decision 0094, "Serving agents"), MCP's own cancellation and progress, with the
 * official SDK's client: aborting a tools/call (its `signal`) sends `notifications/cancelled` as
 * a POST of its own, which cancels the turn through the turn cancel path (turn.cancelled, the
 * session idle and ready for the next message), also when that POST reaches another instance
 * (NATS mode: a "load balancer" sends it to a second instance); a call with a progress token is
 * answered as an event stream with a progress notification per finished step before the
 * result, one without keeps its JSON answer.
 */
async function cancelsTheTurn(t: Parameters<typeof startTestApp>[0], mode: TestMode): Promise<void> {
  const app = await startTestApp(t, { mode });
  // NATS: the cancellation goes to another instance than the call, as behind a load balancer.
  const other = mode === 'nats' ? await startTestApp(t, { mode, databaseUrl: app.databaseUrl!, natsUrl: app.natsUrl! }) : app;
  const balancer: FetchLike = (url, init) => {
    const cancel = typeof init?.body === 'string' && init.body.includes('"notifications/cancelled"');
    return fetch(cancel ? String(url).replace(app.url, other.url) : url, init);
  };
  let cancelsSent = 0;
  const counting: FetchLike = (url, init) => {
    if (typeof init?.body === 'string' && init.body.includes('"notifications/cancelled"')) cancelsSent++;
    return balancer(url, init);
  };
  await createAgent(app, { name: 'slow' });
  const client = await connect(app, app.adminKey, counting);
  t.after(() => client.close());

  const ac = new AbortController();
  const call = client.callTool({ name: 'agent__slow', arguments: { message: '@sleep 20000' } }, undefined, { signal: ac.signal });
  const sessionId = await newestSession(app);
  ac.abort('the user gave up');
  await assert.rejects(call);
  const events = await waitForEvent(app, sessionId, 'turn.cancelled');
  assert.equal(cancelsSent, 1, 'the SDK sent notifications/cancelled');
  const turnId = events.find((e) => e.type === 'turn.started')?.context['turn_id'];
  assert.equal(events.find((e) => e.type === 'turn.cancelled')?.context['turn_id'], turnId);
  assert.ok(!events.some((e) => e.type === 'turn.completed'), 'the turn did not run on');

  const deadline = Date.now() + 15_000;
  while ((await getSession(app, sessionId)).status !== 'idle') {
    assert.ok(Date.now() < deadline, 'the session went idle');
    await new Promise((res) => setTimeout(res, 50));
  }
  const next = (await client.callTool({
    name: 'agent__slow',
    arguments: { message: 'still there?', session_id: sessionId },
  })) as CallToolResult;
  assert.equal(next.isError, undefined, textOf(next));
  assert.match(textOf(next), /still there\?/);
  assert.equal((await listEvents(app, sessionId)).filter((e) => e.type === 'turn.completed').length, 1);
}

async function reportsProgress(app: TestApp): Promise<void> {
  await createAgent(app, { name: 'clock', capabilities: ['current_time'] });
  const client = await connect(app, app.adminKey);
  try {
    const seen: Progress[] = [];
    // Longer than the SSE cycle: an MCP answer's stream must not be cycled (the client cannot resume it).
    const message = '@sleep 300\n@tool get_current_time {}';
    const r = (await client.callTool({ name: 'agent__clock', arguments: { message } }, undefined, {
      onprogress: (p) => seen.push(p),
    })) as CallToolResult;
    const beforeResult = seen.map((p) => p.message);
    assert.equal(r.isError, undefined, textOf(r));
    assert.deepEqual(beforeResult, ['Step 1: the agent calls 1 tool', 'Tool get_current_time completed', 'Step 2: the agent answered']);
    assert.deepEqual(
      seen.map((p) => p.progress),
      [1, 2, 3],
    );
  } finally {
    await client.close();
  }

  // On the wire: an event stream with a token, JSON without.
  const post = (params: Record<string, unknown>, signal?: AbortSignal) =>
    fetch(`${app.url}/v1/mcp`, {
      method: 'POST',
      ...(signal ? { signal } : {}),
      headers: {
        authorization: `Bearer ${app.adminKey}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params }),
    });
  const streamed = await post({ name: 'agent__clock', arguments: { message: 'hi' }, _meta: { progressToken: 'tok' } });
  assert.equal(streamed.headers.get('content-type'), 'text/event-stream');
  const frames = await streamed.text();
  const progressAt = frames.indexOf('"notifications/progress"');
  assert.ok(progressAt >= 0 && progressAt < frames.indexOf('"result"'), frames);
  const plain = await post({ name: 'agent__clock', arguments: { message: 'hi' } });
  assert.equal(plain.headers.get('content-type'), 'application/json');
  const answer = (await plain.json()) as { id: number; result: CallToolResult };
  assert.equal(answer.id, 3);
  assert.match(textOf(answer.result), /hi/);

  // A client that leaves a streamed call cancels its turn, as one that leaves a JSON call does.
  const ac = new AbortController();
  const leaving = await post({ name: 'agent__clock', arguments: { message: '@sleep 20000' }, _meta: { progressToken: 1 } }, ac.signal);
  assert.equal(leaving.headers.get('content-type'), 'text/event-stream');
  const sessionId = await newestSession(app);
  ac.abort();
  const events = await waitForEvent(app, sessionId, 'turn.cancelled');
  assert.ok(!events.some((e) => e.type === 'turn.completed'));
}

for (const mode of ['pglite', 'nats'] as const) {
  describe(`/v1/mcp: MCP cancellation and progress (${mode})`, () => {
    it('a client that aborts its call cancels the turn; the session is idle and takes the next message', (t) => cancelsTheTurn(t, mode));

    it('a call with a progress token gets a notification per finished step before its result; one without gets JSON', async (t) => {
      // Streams cycle at 100 ms and beat every 50 ms: heartbeats fall between the SDK's frames.
      await reportsProgress(await startTestApp(t, { mode, env: { SSE_CYCLE_MS: 100, SSE_HEARTBEAT_MS: 50 } }));
    });
  });
}
