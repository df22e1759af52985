import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startTestApp, type TestApp, type TestMode } from '../helpers/app.js';
import { createSession, listEvents, sendMessage, waitForEvent } from '../turns/helpers.js';
import { FAST_WEBHOOKS, startReceiver, type Received } from './receiver.js';

const TYPES = ['session.created', 'input.message', 'turn.started', 'turn.completed', 'session.idled'];

async function createEndpoint(app: TestApp, url: string, body: Record<string, unknown> = {}) {
  const r = await app.request('POST', '/v1/webhooks', { body: { url, event_types: TYPES, ...body } });
  assert.equal(r.status, 201, r.text);
  return r.body as { endpoint: { id: string }; secret: string };
}

/** Runs `n` turns one after the other on the session. */
async function turns(app: TestApp, sessionId: string, n: number) {
  for (let i = 1; i <= n; i++) {
    const r = await sendMessage(app, sessionId, `message ${i}`);
    assert.equal(r.status, 201, r.text);
    await waitForEvent(app, sessionId, 'session.idled', { n: i, timeoutMs: 30_000 });
  }
}

for (const mode of ['pglite', 'nats'] as TestMode[]) {
  describe(`webhooks: delivery (${mode})`, () => {
    it('delivers every subscribed event of every session, signed, at least once, in order per session; the log shows the attempts', async (t) => {
      const app = await startTestApp(t, { mode, env: FAST_WEBHOOKS });
      const rx = await startReceiver(t);
      const { endpoint, secret } = await createEndpoint(app, rx.url);
      assert.match(secret, /^whsec_[A-Za-z0-9+/]+=*$/);
      rx.secrets = [secret];
      // The secret is shown once: never in a read of the endpoint.
      const got = await app.request('GET', `/v1/webhooks/${endpoint.id}`);
      assert.equal(got.status, 200);
      assert.ok(!got.text.includes(secret.slice(6)));

      const a = await createSession(app);
      const b = await createSession(app);
      await Promise.all([turns(app, a.id, 3), turns(app, b.id, 3)]);
      const expected = new Map<string, { session: string; sequence: number }>();
      for (const s of [a.id, b.id])
        for (const e of await listEvents(app, s)) if (TYPES.includes(e.type)) expected.set(e.id, { session: s, sequence: e.sequence });
      assert.ok(expected.size >= 2 * (1 + 3 * 4), `expected events: ${expected.size}`);

      const eventIdOf = (r: Received) => r.json.data['event'].id as string;
      await rx.waitFor((all) => [...expected.keys()].every((id) => all.some((r) => eventIdOf(r) === id)), 30_000, 'every event');
      for (const r of rx.received) {
        assert.deepEqual(r.verifiedBy, [0], 'signed with the endpoint secret');
        assert.match(r.id, /^msg_/);
        assert.ok(expected.has(eventIdOf(r)), `an event of the two sessions: ${r.json.type}`);
        assert.equal(r.json.type, r.json.data['event'].type);
        assert.equal(r.json.data['session_id'], r.json.data['event'].session_id);
        assert.equal(r.json.data['agent_id'], r.json.data['session_id'] === a.id ? a.agentId : b.agentId);
      }
      // Ordered per session: the first arrival of each event comes in sequence order.
      for (const s of [a.id, b.id]) {
        const seen = new Set<string>();
        const seqs = rx.received
          .filter((r) => r.json.data['session_id'] === s && !seen.has(eventIdOf(r)) && seen.add(eventIdOf(r)))
          .map((r) => r.json.data['event'].sequence as number);
        assert.deepEqual(
          seqs,
          [...seqs].sort((x, y) => x - y),
          `session ${s} in order`,
        );
      }
      // The delivery log: every delivery delivered, with its 200 attempt and latency.
      const page = await app.request('GET', `/v1/webhooks/${endpoint.id}/deliveries?limit=200`);
      assert.equal(page.status, 200, page.text);
      assert.equal(page.body.total, expected.size);
      await waitDelivered(app, endpoint.id, expected.size);
      const one = page.body.data[0];
      const detail = await app.request('GET', `/v1/webhooks/${endpoint.id}/deliveries/${one.id}`);
      assert.equal(detail.status, 200, detail.text);
      assert.equal(detail.body.attempts.at(-1).status, 200);
      assert.ok(detail.body.attempts.at(-1).latency_ms >= 0);
      // The secret never reaches a log line.
      assert.ok(!app.logs.join('').includes(secret.slice(6)), 'secret in the logs');
    });

    it('filters by agent and by session tag', async (t) => {
      const app = await startTestApp(t, { mode, env: FAST_WEBHOOKS });
      const rx = await startReceiver(t);
      const a = await createSession(app, {}, { tags: ['crm'] });
      const b = await createSession(app);
      const byAgent = await createEndpoint(app, rx.url, { event_types: ['turn.completed'], filter: { agent_ids: [b.agentId] } });
      const byTag = await createEndpoint(app, rx.url + '?tag', { event_types: ['turn.completed'], filter: { session_tags: ['crm'] } });
      rx.secrets = [byAgent.secret, byTag.secret];
      await Promise.all([turns(app, a.id, 1), turns(app, b.id, 1)]);
      const all = await rx.waitFor((r) => r.length >= 2, 30_000, 'two deliveries');
      await new Promise((r) => setTimeout(r, 500));
      assert.equal(rx.received.length, 2, 'one delivery per endpoint');
      const bySession = Object.fromEntries(all.map((r) => [r.json.data['session_id'], r.verifiedBy]));
      assert.deepEqual(bySession, { [a.id]: [1], [b.id]: [0] });
    });
  });
}

async function waitDelivered(app: TestApp, endpointId: string, n: number): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const r = await app.request('GET', `/v1/webhooks/${endpointId}/deliveries?state=delivered&limit=1`);
    if (r.body.total === n) return;
    if (Date.now() > deadline) assert.fail(`delivered: ${r.body.total} of ${n}`);
    await new Promise((res) => setTimeout(res, 100));
  }
}

describe('webhooks: a deployment without endpoints', () => {
  it("reads no session for its events; the first endpoint created here gets the next session's events at once", async (t) => {
    // A long cache: only the creation's own invalidation can make this instance see the endpoint.
    const app = await startTestApp(t, { mode: 'pglite', env: { ...FAST_WEBHOOKS, WEBHOOK_ENDPOINT_CACHE_MS: 60_000 } });
    const store = app.app.services.store;
    const sql = store.sql.bind(store);
    let factReads = 0;
    store.sql = ((text: unknown, ...rest: unknown[]) => {
      if (String(text).includes('agent_id, tags from sessions')) factReads++;
      return (sql as (...a: unknown[]) => unknown)(text, ...rest);
    }) as typeof store.sql;
    t.after(() => (store.sql = sql));

    const quiet = await createSession(app);
    await turns(app, quiet.id, 2);
    assert.equal(factReads, 0, 'no session read while no organisation has an endpoint');

    const rx = await startReceiver(t);
    rx.secrets = [(await createEndpoint(app, rx.url)).secret];
    const s = await createSession(app);
    await turns(app, s.id, 1);
    const expected = (await listEvents(app, s.id)).filter((e) => TYPES.includes(e.type));
    await rx.waitFor((all) => expected.every((e) => all.some((x) => x.json.data['event'].id === e.id)), 30_000, "the new session's events");
    assert.ok(factReads >= 1, 'the session is read once an endpoint exists');
    assert.ok(
      rx.received.every((x) => x.json.data['session_id'] === s.id),
      'nothing of the session from before the endpoint',
    );
  });
});

describe('webhooks: the writer-died window', () => {
  it("an event stored without its outbox row (writer killed in between) is queued when the session's next turn starts, in order", async (t) => {
    const app = await startTestApp(t, { mode: 'pglite', env: FAST_WEBHOOKS });
    const rx = await startReceiver(t);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    t.after(() => release());
    rx.answer = (_r, n) => (n === 1 ? { status: 200, hold: held } : { status: 200 });
    const { endpoint, secret } = await createEndpoint(app, rx.url);
    rx.secrets = [secret];
    const s = await createSession(app);
    await turns(app, s.id, 1);
    const idled = (await listEvents(app, s.id)).find((e) => e.type === 'session.idled')!;
    // The first delivery is held, so the rest wait; remove the idle event's row as if its writer had died before the INSERT.
    await rx.waitFor((all) => all.length === 1);
    // Rows are written behind the append: wait for this one before removing it.
    const sql = app.app.services.store.sql.bind(app.app.services.store);
    for (let tries = 0; (await sql('select 1 from webhook_deliveries where event_id = ?', [idled.id])).length === 0; tries++) {
      assert.ok(tries < 100, 'the idle event was queued');
      await new Promise((res) => setTimeout(res, 50));
    }
    const gone = await sql('delete from webhook_deliveries where event_id = ? returning 1', [idled.id]);
    assert.equal(gone.length, 1);
    const r = await sendMessage(app, s.id, 'again');
    assert.equal(r.status, 201, r.text);
    await waitForEvent(app, s.id, 'session.idled', { n: 2, timeoutMs: 30_000 });
    release();
    const expected = (await listEvents(app, s.id)).filter((e) => TYPES.includes(e.type));
    const eventIdOf = (x: Received) => x.json.data['event'].id as string;
    await rx.waitFor((all) => expected.every((e) => all.some((x) => eventIdOf(x) === e.id)), 30_000, 'every event, the lost one too');
    const order = [...new Map(rx.received.map((x) => [eventIdOf(x), x.json.data['event'].sequence as number])).values()];
    assert.deepEqual(
      order,
      expected.map((e) => e.sequence),
    );
    const page = await app.request('GET', `/v1/webhooks/${endpoint.id}/deliveries?limit=100`);
    assert.equal(page.body.total, expected.length);
  });
});
