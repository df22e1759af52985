import assert from 'node:assert/strict';
import { it } from 'node:test';
import { TEST_ADMIN_KEY, TEST_SECRETS_KEY, type TestApp } from '../helpers/app.js';
import { request } from '../helpers/http.js';
import { freePort, natsServiceEnv, startNatsServer } from '../helpers/nats-server.js';
import { createTestDatabase } from '../helpers/postgres.js';
import { spawnService, type ServiceProcess } from '../helpers/service-process.js';
import { createSession, listEvents, sendMessage, waitForEvent } from '../turns/helpers.js';
import { FAST_WEBHOOKS, startReceiver } from './receiver.js';

const TYPES = ['session.created', 'input.message', 'turn.completed', 'session.idled'];

/** The request helpers of the tests against a service in its own process. */
function endpointOf(url: string): TestApp {
  return { url, adminKey: TEST_ADMIN_KEY, request: (m, p, o = {}) => request(url, m, p, { key: TEST_ADMIN_KEY, ...o }) } as TestApp;
}

it('an instance SIGKILLed while a receiver holds its delivery: another instance delivers it and everything after it, in order, none lost', async (t) => {
  const db = await createTestDatabase('webhooks-kill');
  t.after(() => db.drop());
  const nats = await startNatsServer();
  t.after(() => nats.stop());
  const env = {
    ...Object.fromEntries(Object.entries(FAST_WEBHOOKS).map(([k, v]) => [k, String(v)])),
    DATABASE_URL: db.url,
    ...natsServiceEnv(nats),
    SECRETS_ENCRYPTION_KEY: TEST_SECRETS_KEY,
    BOOTSTRAP_ADMIN_API_KEY: TEST_ADMIN_KEY,
    // The lease is 2 × timeout + 1 s: the survivor takes the delivery over 5 s after the kill at most.
    WEBHOOK_TIMEOUT_MS: '2000',
    WEBHOOK_CONCURRENCY_PER_ENDPOINT: '1',
  };
  const start = async (): Promise<{ svc: ServiceProcess; app: TestApp }> => {
    const port = await freePort();
    const svc = spawnService({ ...env, PORT: String(port) }, t);
    const url = `http://127.0.0.1:${port}`;
    await svc.waitHealthy(url, 120_000);
    return { svc, app: endpointOf(url) };
  };
  const rx = await startReceiver(t);
  let releaseHeld!: () => void;
  const held = new Promise<void>((r) => (releaseHeld = r));
  t.after(() => releaseHeld());
  // The first request is held (never answered while its instance lives); the rest succeed.
  rx.answer = (_r, n) => (n === 1 ? { status: 200, hold: held } : { status: 200 });

  const a = await start();
  const created = await a.app.request('POST', '/v1/webhooks', { body: { url: rx.url, event_types: TYPES } });
  assert.equal(created.status, 201, created.text);
  rx.secrets = [created.body.secret];
  const endpointId = created.body.endpoint.id as string;
  const session = await createSession(a.app);
  assert.equal((await sendMessage(a.app, session.id, 'hello')).status, 201);
  await waitForEvent(a.app, session.id, 'session.idled', { timeoutMs: 60_000 });
  const expected = (await listEvents(a.app, session.id)).filter((e) => TYPES.includes(e.type));
  assert.equal(expected[0]!.type, 'session.created');
  await rx.waitFor((all) => all.length >= 1, 20_000, 'the held request');
  assert.equal(rx.received.length, 1, 'the rest of the session waits behind the held delivery (order)');

  a.svc.proc.kill('SIGKILL');
  await a.svc.exited;
  const killedAt = Date.now();
  const b = await start();
  const eventIdOf = (r: (typeof rx.received)[number]) => r.json.data['event'].id as string;
  await rx.waitFor((all) => expected.every((e) => all.slice(1).some((r) => eventIdOf(r) === e.id)), 60_000, 'every event after the kill');
  t.diagnostic(`recovered: every delivery made ${Date.now() - killedAt} ms after the kill (instance start included)`);

  assert.ok(
    rx.received.every((r) => r.verifiedBy.length === 1),
    'all signed',
  );
  assert.equal(eventIdOf(rx.received[0]!), expected[0]!.id);
  assert.equal(rx.received[1]!.id, rx.received[0]!.id, 'the held delivery again, same webhook-id');
  const firstArrivals = [...new Map(rx.received.slice(1).map((r) => [eventIdOf(r), r.json.data['event'].sequence as number])).values()];
  assert.deepEqual(
    firstArrivals,
    expected.map((e) => e.sequence),
    'in order, none lost, none extra',
  );

  const page = await b.app.request('GET', `/v1/webhooks/${endpointId}/deliveries?limit=100`);
  assert.equal(page.status, 200, page.text);
  assert.equal(page.body.total, expected.length);
  const deadline = Date.now() + 10_000;
  for (;;) {
    const d = await b.app.request('GET', `/v1/webhooks/${endpointId}/deliveries?state=delivered&limit=1`);
    if (d.body.total === expected.length) break;
    assert.ok(Date.now() < deadline, `delivered ${d.body.total} of ${expected.length}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const first = page.body.data.find((d: { event_id: string }) => d.event_id === expected[0]!.id);
  assert.equal(first.attempts, 2, 'the killed attempt counts: the survivor made the second');
});
