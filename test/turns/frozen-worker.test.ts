import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestApp } from '../helpers/app.js';
import { natsServiceEnv } from '../helpers/nats-server.js';
import { INTERRUPTED_TOOL_ERROR } from '../../src/turns/turn-events.js';
import { assertLogIntegrity, createSession, listEvents, sendMessage, waitForEvent } from './helpers.js';
import { LOCAL_WEB_FETCH, LOCAL_WEB_FETCH_ENV, startSlowServer } from './slow-server.js';
import { spawnWorker, type LogLine } from './worker-process.js';

/**
 * Issue 32 item 3: a worker frozen (SIGSTOP) mid-tool for 15-20 s had its lease run out; the
 * worker that took the turn over asked whether it lived, got no answer within 500 ms, took it
 * for dead and recorded the tool "interrupted" although the tool server had answered 200 (17 of
 * them in the chaos run). A silent process is not a dead one: the takeover waits for it, and the
 * woken worker hands its result over through the log (its other writes stay fenced).
 */
const LEASE_MS = 2_000;
const FREEZE_MS = 8_000;

const claimed = (sessionId: string) => (l: LogLine) => l.msg === 'turn claimed' && l['sessionId'] === sessionId;

describe('a worker frozen mid-tool (nats)', () => {
  it('its tool result, answered while it was frozen, is recorded once as succeeded, not "interrupted"', async (t) => {
    const server = await startSlowServer();
    t.after(() => server.close());
    const env = { ...LOCAL_WEB_FETCH_ENV, TURN_CLAIM_TIMEOUT_MS: String(LEASE_MS) };
    const api = await startTestApp(t, { mode: 'nats', env: { ROLE: 'api', ...env } });
    const workerEnv = { DATABASE_URL: api.databaseUrl!, ...natsServiceEnv(api.natsUrl!), ...env };
    const workers = [spawnWorker('w1', workerEnv, t), spawnWorker('w2', workerEnv, t)];
    await Promise.all(workers.map((w) => w.waitForLog((l) => l.msg === 'turn worker started', 120_000)));

    const { id } = await createSession(api, { capabilities: [LOCAL_WEB_FETCH] });
    const url = `${server.url}/slow?ms=1500&id=${id}`;
    assert.equal((await sendMessage(api, id, `@tool fetch_url {"url":"${url}","format":"text"}`)).status, 201);
    await waitForEvent(api, id, 'tool.started', { timeoutMs: 20_000 });
    const holder = workers.find((w) => w.lines.some(claimed(id)))!;
    const survivor = workers.find((w) => w !== holder)!;

    holder.kill('SIGSTOP');
    try {
      await survivor.waitForLog(claimed(id), 20_000); // its lease ran out: the turn is taken over
      await sleep(FREEZE_MS);
    } finally {
      holder.kill('SIGCONT');
    }

    const events = await waitForEvent(api, id, 'session.idled', { timeoutMs: 60_000 });
    const results = events.filter((e) => e.type === 'tool.completed');
    assert.deepEqual(
      results.map((e) => (e.data['success'] ? 'ok' : e.data['error'])),
      ['ok'],
      `one result, the tool's answer (not "${INTERRUPTED_TOOL_ERROR}"); log: ${events.map((e) => e.type).join(', ')}`,
    );
    assert.equal(server.hits.get(id), 1, 'the tool ran once');
    assert.equal(events.filter((e) => e.type === 'turn.completed').length, 1, 'the turn completed once');
    assertLogIntegrity(await listEvents(api, id));
  });
});
