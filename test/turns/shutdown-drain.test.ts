import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { INTERRUPTED_TOOL_ERROR } from '../../src/turns/turn-events.js';
import { startTestApp } from '../helpers/app.js';
import { assertLogIntegrity, createSession, listEvents, sendMessage, waitForEvent } from './helpers.js';
import { LOCAL_WEB_FETCH, LOCAL_WEB_FETCH_ENV, startSlowServer } from './slow-server.js';

/**
 * Issue 13 item 3: an instance that shuts down while a tool runs lets the tool finish within
 * SHUTDOWN_TIMEOUT_MS and stores its result; a second instance (same PostgreSQL) then resumes
 * the turn from the log. Only a tool still running when the window runs out is interrupted.
 */
describe('turn worker shutdown with a running tool (postgres)', () => {
  async function stopMidTool(t: { after(fn: () => unknown): void }, toolMs: number, shutdownMs: number) {
    const server = await startSlowServer();
    t.after(() => server.close());
    const env = { ...LOCAL_WEB_FETCH_ENV, SHUTDOWN_TIMEOUT_MS: shutdownMs, TURN_CLAIM_TIMEOUT_MS: 60_000 };
    const first = await startTestApp(t, { mode: 'postgres', env });
    const { id } = await createSession(first, { capabilities: [LOCAL_WEB_FETCH] });
    const text = `@tool fetch_url {"url":"${server.url}/slow?ms=${toolMs}&id=slow"}`;
    assert.equal((await sendMessage(first, id, text)).status, 201);
    await waitForEvent(first, id, 'tool.started');
    const stopStarted = Date.now();
    await first.app.close();
    const stopMs = Date.now() - stopStarted;
    // The turn went back to the queue (a nak, not the 60 s lease): a second instance finishes it.
    const second = await startTestApp(t, { mode: 'postgres', databaseUrl: first.databaseUrl!, env });
    const events = await waitForEvent(second, id, 'session.idled', { timeoutMs: 20_000 });
    assertLogIntegrity(await listEvents(second, id));
    const completed = events.filter((e) => e.type === 'tool.completed');
    assert.equal(completed.length, 1, 'one result for the one call');
    assert.equal(server.hits.get('slow'), 1, 'the tool ran once');
    return { result: completed[0]!.data, stopMs };
  }

  it('SIGTERM path (app.close) while a slow tool runs: the tool finishes and is recorded as succeeded', async (t) => {
    const { result, stopMs } = await stopMidTool(t, 1_500, 10_000);
    assert.equal(result['success'], true, `recorded as ${JSON.stringify(result)}`);
    assert.notEqual(result['error'], INTERRUPTED_TOOL_ERROR);
    assert.ok(stopMs >= 1_000, `shutdown waited for the tool (${stopMs} ms)`);
    assert.ok(stopMs < 10_000, `and not for the whole window (${stopMs} ms)`);
  });

  it('a tool still running when the shutdown window runs out is aborted and recorded as interrupted', async (t) => {
    const { result, stopMs } = await stopMidTool(t, 8_000, 500);
    assert.equal(result['success'], false);
    assert.equal(result['error'], INTERRUPTED_TOOL_ERROR);
    assert.ok(stopMs < 5_000, `shutdown did not wait for the tool (${stopMs} ms)`);
  });
});
