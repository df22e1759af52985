/**
 * Messages sent while a turn runs (issue 26 item 3; docs/decisions/0097-messages-while-busy.md):
 * `on_busy` enqueue / interrupt / reject, the queue's bound, its cancel, and a queue that
 * survives a worker killed mid-turn. Real HTTP, real PostgreSQL/PGlite, real NATS, llmsim.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { natsServiceEnv } from '../helpers/nats-server.js';
import { assertLogIntegrity, createSession, listEvents, sendMessage, waitForEvent, type StoredEvent } from './helpers.js';
import { spawnWorker } from './worker-process.js';

/** The status, with the service's error log lines in the message when it is another. */
function assertStatus(app: TestApp, r: { status: number; text: string }, status: number): void {
  if (r.status === status) return;
  const errors = app.logs.filter((l) => /"level":50/.test(l)).join('\n');
  assert.equal(r.status, status, `${r.text}\n${errors.slice(0, 3000)}`);
}

function send(app: TestApp, sessionId: string, text: string, onBusy?: string, headers?: Record<string, string>) {
  return app.request('POST', `/v1/sessions/${sessionId}/messages`, {
    body: { message: { content: [{ type: 'text', text }] }, ...(onBusy ? { on_busy: onBusy } : {}) },
    ...(headers ? { headers } : {}),
  });
}

/** The texts of the user messages that started turns, in log order. */
function turnInputs(events: StoredEvent[]): string[] {
  const started = new Set(events.filter((e) => e.type === 'turn.started').map((e) => e.data['input_message_id']));
  return events
    .filter((e) => e.type === 'input.message' && started.has(e.data['message'].id))
    .map((e) => e.data['message'].content[0].text as string);
}

/** `queued_messages` of the session as GET /v1/sessions/{id} and the session list show it. */
async function queuedCounts(app: TestApp, sessionId: string): Promise<{ view: number; listed: number }> {
  const view = await app.request('GET', `/v1/sessions/${sessionId}`);
  const list = await app.request('GET', '/v1/sessions');
  const listed = list.body.data.find((s: { id: string }) => s.id === sessionId);
  return { view: view.body.queued_messages, listed: listed?.queued_messages };
}

/** Polls the log until `n` session.idled are in (a queued turn's events come after the first idle). */
async function idledTimes(app: TestApp, sessionId: string, n: number, timeoutMs = 60_000): Promise<StoredEvent[]> {
  return waitForEvent(app, sessionId, 'session.idled', { n, timeoutMs });
}

for (const mode of ['pglite', 'nats'] as const) {
  describe(`messages while busy (${mode})`, () => {
    it('enqueue 5 while a turn runs: 202 each, five more turns in arrival order, each exactly once, queue visible then empty', async (t) => {
      const app = await startTestApp(t, { mode });
      const { id } = await createSession(app);
      assert.equal((await sendMessage(app, id, '@tokens 30 delay=40\nfirst')).status, 201);
      const queued = [];
      for (let i = 1; i <= 5; i++) {
        const r = await send(app, id, `@tokens 3\nqueued ${i}`, 'enqueue');
        assertStatus(app, r, 202);
        assert.equal(r.body.object, 'queued_message');
        assert.equal(r.body.status, 'queued');
        queued.push(r.body);
      }
      assert.deepEqual(
        queued.map((q) => q.position),
        [1, 2, 3, 4, 5],
      );
      const listed = await app.request('GET', `/v1/sessions/${id}/queue`);
      assert.equal(listed.status, 200);
      assert.ok(listed.body.total >= 4, `queue while the first turn runs: ${listed.body.total}`);
      const events = await idledTimes(app, id, 6);
      assert.deepEqual(turnInputs(events), ['@tokens 30 delay=40\nfirst', ...[1, 2, 3, 4, 5].map((i) => `@tokens 3\nqueued ${i}`)]);
      assert.equal(events.filter((e) => e.type === 'turn.started').length, 6);
      assert.equal(events.filter((e) => e.type === 'input.queued').length, 5);
      const dequeued = events.filter((e) => e.type === 'input.dequeued');
      assert.deepEqual(
        dequeued.map((e) => e.data['queued_id']),
        queued.map((q) => q.id),
      );
      assert.ok(dequeued.every((e) => e.data['reason'] === 'started'));
      assertLogIntegrity(events);
      assert.equal((await app.request('GET', `/v1/sessions/${id}/queue`)).body.total, 0);
      assert.equal((await app.request('GET', `/v1/sessions/${id}`)).body.queued_messages, 0);
      // Nothing runs twice: a while later the log holds the same six turns.
      await new Promise((r) => setTimeout(r, 500));
      assert.equal((await listEvents(app, id)).filter((e) => e.type === 'turn.started').length, 6);
    });

    it('enqueue on an idle session starts at once (201); reject stays 409; a bad on_busy is 400', async (t) => {
      const app = await startTestApp(t, { mode });
      const { id } = await createSession(app);
      const first = await send(app, id, '@tokens 30 delay=40\nnow', 'enqueue');
      assert.equal(first.status, 201, first.text);
      assert.deepEqual((await send(app, id, 'again', 'reject')).body, { error: 'Session is busy', status: 409 });
      assert.equal((await send(app, id, 'again')).status, 409);
      const bad = await send(app, id, 'x', 'later');
      assert.equal(bad.status, 400);
      assert.equal(bad.body.status, 400);
      assert.equal(typeof bad.body.error, 'string');
      await idledTimes(app, id, 1);
    });

    it('the queue is bounded (429 past SESSION_MAX_QUEUED_MESSAGES) and a queued message can be cancelled', async (t) => {
      const app = await startTestApp(t, { mode, env: { SESSION_MAX_QUEUED_MESSAGES: '2' } });
      const { id } = await createSession(app);
      assert.equal((await sendMessage(app, id, '@tokens 40 delay=50\nlong')).status, 201);
      const a = await send(app, id, '@tokens 2\nA', 'enqueue');
      const b = await send(app, id, '@tokens 2\nB', 'enqueue');
      assert.equal(a.status, 202);
      assert.equal(b.status, 202);
      const over = await send(app, id, '@tokens 2\nC', 'enqueue');
      assert.equal(over.status, 429, over.text);
      assert.equal(over.body.status, 429);
      assert.deepEqual(await queuedCounts(app, id), { view: 2, listed: 2 }, 'the session view and list count the waiting messages');
      const cancelled = await app.request('DELETE', `/v1/sessions/${id}/queue/${a.body.id}`);
      assert.equal(cancelled.status, 200, cancelled.text);
      assert.equal(cancelled.body.status, 'cancelled');
      assert.deepEqual(await queuedCounts(app, id), { view: 1, listed: 1 }, 'a cancelled message is no longer counted');
      assert.equal((await app.request('DELETE', `/v1/sessions/${id}/queue/${a.body.id}`)).body.status, 'cancelled');
      const unknown = await app.request('DELETE', `/v1/sessions/${id}/queue/019a0000-0000-7000-8000-0000000000ff`);
      assert.equal(unknown.status, 404);
      // A place freed: C fits now.
      assert.equal((await send(app, id, '@tokens 2\nC', 'enqueue')).status, 202);
      const events = await idledTimes(app, id, 3);
      assert.deepEqual(turnInputs(events), ['@tokens 40 delay=50\nlong', '@tokens 2\nB', '@tokens 2\nC']);
      const cancelEvent = events.find((e) => e.type === 'input.dequeued' && e.data['reason'] === 'cancelled');
      assert.equal(cancelEvent?.data['queued_id'], a.body.id);
      await new Promise((r) => setTimeout(r, 300));
      assert.equal((await listEvents(app, id)).filter((e) => e.type === 'turn.started').length, 3, 'the cancelled message never ran');
    });

    it('interrupt: the running turn is cancelled (spec 3.2) and the message runs next, before earlier queued ones', async (t) => {
      const app = await startTestApp(t, { mode });
      const { id } = await createSession(app);
      assert.equal((await sendMessage(app, id, '@tokens 200 delay=20\nlong')).status, 201);
      await waitForEvent(app, id, 'output.message.delta');
      assert.equal((await send(app, id, '@tokens 2\nlater', 'enqueue')).status, 202);
      const r = await send(app, id, '@tokens 2\nstop and do this', 'interrupt');
      assert.equal(r.status, 202, r.text);
      assert.equal(r.body.on_busy, 'interrupt');
      const events = await idledTimes(app, id, 3);
      assert.ok(
        events.some((e) => e.type === 'turn.cancelled'),
        'the running turn was cancelled',
      );
      assert.equal(events.filter((e) => e.type === 'turn.completed').length, 2);
      assert.deepEqual(turnInputs(events), ['@tokens 200 delay=20\nlong', '@tokens 2\nstop and do this', '@tokens 2\nlater']);
      assertLogIntegrity(events);
    });

    it('Idempotency-Key with enqueue: a retry answers the same queued message and it runs once', async (t) => {
      const app = await startTestApp(t, { mode });
      const { id } = await createSession(app);
      assert.equal((await sendMessage(app, id, '@tokens 30 delay=40\nfirst')).status, 201);
      const headers = { 'Idempotency-Key': 'queue-key-1' };
      const one = await send(app, id, '@tokens 2\nonce', 'enqueue', headers);
      const two = await send(app, id, '@tokens 2\nonce', 'enqueue', headers);
      assert.equal(one.status, 202);
      assert.equal(two.status, 202);
      assert.equal(two.body.id, one.body.id);
      const events = await idledTimes(app, id, 2);
      await new Promise((r) => setTimeout(r, 300));
      assert.deepEqual(turnInputs(await listEvents(app, id)), ['@tokens 30 delay=40\nfirst', '@tokens 2\nonce']);
      assert.equal(events.filter((e) => e.type === 'input.queued').length, 1);
    });
  });
}

describe('messages while busy across a worker kill (nats, two worker processes)', () => {
  it('SIGKILL of the worker running the turn: the 5 queued messages still run, in order, each exactly once', async (t) => {
    const api = await startTestApp(t, { mode: 'nats', env: { ROLE: 'api', TURN_CLAIM_TIMEOUT_MS: '3000' } });
    const env = { DATABASE_URL: api.databaseUrl!, ...natsServiceEnv(api.natsUrl!), TURN_CLAIM_TIMEOUT_MS: '3000' };
    const workers = [spawnWorker('q1', env, t), spawnWorker('q2', env, t)];
    await Promise.all(workers.map((w) => w.waitForLog((l) => l.msg === 'turn worker started')));
    const { id } = await createSession(api);
    assert.equal((await sendMessage(api, id, '@tokens 100 delay=30\nfirst')).status, 201);
    const victim = await Promise.any(
      workers.map((w) => w.waitForLog((l) => l.msg === 'turn claimed' && l['sessionId'] === id).then(() => w)),
    );
    for (let i = 1; i <= 5; i++) assert.equal((await send(api, id, `@tokens 3\nq${i}`, 'enqueue')).status, 202);
    await waitForEvent(api, id, 'output.message.delta');
    victim.kill('SIGKILL');
    const events = await idledTimes(api, id, 6, 90_000);
    assert.deepEqual(turnInputs(events), ['@tokens 100 delay=30\nfirst', ...[1, 2, 3, 4, 5].map((i) => `@tokens 3\nq${i}`)]);
    await new Promise((r) => setTimeout(r, 500));
    const after = await listEvents(api, id);
    assert.equal(after.filter((e) => e.type === 'turn.started').length, 6, 'no message ran twice');
    assert.equal(after.filter((e) => e.type === 'input.dequeued').length, 5);
    assertLogIntegrity(after);
  });
});
