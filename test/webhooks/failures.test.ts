import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { createOrgWithAdmin, createUser, login, createKey } from '../api/auth/helpers.js';
import { request } from '../helpers/http.js';
import { FAST_WEBHOOKS, startReceiver, type Receiver } from './receiver.js';

async function endpointFor(app: TestApp, rx: Receiver, body: Record<string, unknown> = {}) {
  const r = await app.request('POST', '/v1/webhooks', { body: { url: rx.url, event_types: ['turn.completed'], ...body } });
  assert.equal(r.status, 201, r.text);
  rx.secrets = [r.body.secret];
  return r.body.endpoint.id as string;
}

async function testSend(app: TestApp, endpointId: string): Promise<string> {
  const r = await app.request('POST', `/v1/webhooks/${endpointId}/test`);
  assert.equal(r.status, 202, r.text);
  assert.equal(r.body.event_type, 'webhook.test');
  return r.body.id;
}

async function detail(app: TestApp, endpointId: string, deliveryId: string) {
  const r = await app.request('GET', `/v1/webhooks/${endpointId}/deliveries/${deliveryId}`);
  assert.equal(r.status, 200, r.text);
  return r.body as {
    delivery: { state: string; attempts: number };
    attempts: { attempt: number; status: number | null; error: string | null; latency_ms: number }[];
  };
}

async function until<T>(what: string, fn: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) assert.fail(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('webhooks: retries, redelivery, disable', () => {
  it('retries after 500s and after a timeout with growing pauses, then delivers; a manual redelivery sends the same message again', async (t) => {
    const app = await startTestApp(t, { mode: 'pglite', env: { ...FAST_WEBHOOKS, WEBHOOK_TIMEOUT_MS: 500 } });
    const rx = await startReceiver(t);
    // 500, 500, too slow (past the 500 ms deadline), then 200.
    rx.answer = (_r, n) => (n <= 2 ? { status: 500 } : n === 3 ? { status: 200, delayMs: 1500 } : { status: 200 });
    const endpointId = await endpointFor(app, rx);
    const deliveryId = await testSend(app, endpointId);
    const d = await until('delivered', async () => {
      const x = await detail(app, endpointId, deliveryId);
      return x.delivery.state === 'delivered' ? x : undefined;
    });
    assert.deepEqual(
      d.attempts.map((a) => [a.attempt, a.status]),
      [
        [1, 500],
        [2, 500],
        [3, null],
        [4, 200],
      ],
    );
    assert.equal(d.attempts[0]!.error, 'HTTP 500');
    assert.match(d.attempts[2]!.error!, /timed out after 500 ms/);
    assert.ok(d.attempts[2]!.latency_ms >= 450, `the timeout attempt took ${d.attempts[2]!.latency_ms} ms`);
    // Same message id on every attempt; every one signed; the pauses grow (base 100 ms, equal jitter: ≥ 50, ≥ 100, ≥ 150 ms).
    assert.equal(new Set(rx.received.map((r) => r.id)).size, 1);
    assert.ok(rx.received.every((r) => r.verifiedBy.length === 1));
    const gaps = rx.received.slice(1).map((r, i) => r.at - rx.received[i]!.at);
    assert.ok(gaps[0]! >= 45 && gaps[1]! >= 95, `pauses ${gaps.join(', ')}`);

    const again = await app.request('POST', `/v1/webhooks/${endpointId}/deliveries/${deliveryId}/redeliver`);
    assert.equal(again.status, 202, again.text);
    await rx.waitFor((all) => all.length === 5, 10_000, 'the redelivery');
    assert.equal(rx.received[4]!.id, rx.received[0]!.id);
    const after = await until('redelivered', async () => {
      const x = await detail(app, endpointId, deliveryId);
      return x.delivery.state === 'delivered' && x.attempts.length === 5 ? x : undefined;
    });
    assert.equal(after.attempts.at(-1)!.status, 200);
    // Unknown deliveries and endpoints are 404.
    const missing = await app.request('POST', `/v1/webhooks/${endpointId}/deliveries/${crypto.randomUUID()}/redeliver`);
    assert.equal(missing.status, 404);
  });

  it('gives a delivery up after the retry window', async (t) => {
    const app = await startTestApp(t, { mode: 'pglite', env: { ...FAST_WEBHOOKS, WEBHOOK_RETRY_WINDOW_MS: 300 } });
    const rx = await startReceiver(t);
    rx.answer = () => ({ status: 503 });
    const endpointId = await endpointFor(app, rx);
    const deliveryId = await testSend(app, endpointId);
    const d = await until('failed', async () => {
      const x = await detail(app, endpointId, deliveryId);
      return x.delivery.state === 'failed' ? x : undefined;
    });
    assert.ok(d.attempts.length >= 1 && d.attempts.every((a) => a.status === 503));
    const n = rx.received.length;
    await new Promise((r) => setTimeout(r, 800));
    assert.equal(rx.received.length, n, 'no attempt after giving up');
  });

  it('disables an endpoint after sustained failure, says why, sends nothing more; re-enabling delivers what waited', async (t) => {
    const app = await startTestApp(t, {
      mode: 'pglite',
      env: { ...FAST_WEBHOOKS, WEBHOOK_DISABLE_AFTER_FAILURES: 3, WEBHOOK_DISABLE_AFTER_MS: 0 },
    });
    const rx = await startReceiver(t);
    let healthy = false;
    rx.answer = () => ({ status: healthy ? 200 : 500 });
    const endpointId = await endpointFor(app, rx);
    const first = await testSend(app, endpointId);
    const ep = await until('disabled', async () => {
      const r = await app.request('GET', `/v1/webhooks/${endpointId}`);
      return r.body.status === 'disabled' ? r.body : undefined;
    });
    assert.match(ep.disabled_reason, /disabled after 3 failed attempts in a row/);
    assert.ok(ep.disabled_at);
    assert.equal(rx.received.length, 3);
    const second = await testSend(app, endpointId);
    await new Promise((r) => setTimeout(r, 800));
    assert.equal(rx.received.length, 3, 'a disabled endpoint gets nothing');
    assert.ok(app.logs.some((l) => l.includes('webhook endpoint disabled after sustained failure')));

    healthy = true;
    const on = await app.request('PATCH', `/v1/webhooks/${endpointId}`, { body: { status: 'active' } });
    assert.equal(on.status, 200, on.text);
    assert.equal(on.body.disabled_reason, null);
    assert.equal(on.body.consecutive_failures, 0);
    await until('both delivered', async () => {
      const a = await detail(app, endpointId, first);
      const b = await detail(app, endpointId, second);
      return a.delivery.state === 'delivered' && b.delivery.state === 'delivered' ? true : undefined;
    });
  });
});

describe('webhooks: secrets, address policy, quotas, roles', () => {
  it('rotation: during the overlap both secrets sign; without overlap only the new one', async (t) => {
    const app = await startTestApp(t, { mode: 'pglite', env: FAST_WEBHOOKS });
    const rx = await startReceiver(t);
    const endpointId = await endpointFor(app, rx);
    const oldSecret = rx.secrets[0]!;
    const rot = await app.request('POST', `/v1/webhooks/${endpointId}/rotate-secret`, { body: { overlap_seconds: 3600 } });
    assert.equal(rot.status, 200, rot.text);
    const newSecret = rot.body.secret as string;
    assert.notEqual(newSecret, oldSecret);
    assert.ok(Date.parse(rot.body.previous_secret_expires_at) > Date.now() + 3500_000);
    rx.secrets = [oldSecret, newSecret];
    await testSend(app, endpointId);
    const [during] = await rx.waitFor((all) => all.length === 1);
    assert.deepEqual(during!.verifiedBy, [0, 1], 'each secret alone verifies');
    assert.equal(String(during!.headers['webhook-signature']).split(' ').length, 2);

    const rot2 = await app.request('POST', `/v1/webhooks/${endpointId}/rotate-secret`, { body: { overlap_seconds: 0 } });
    assert.equal(rot2.status, 200, rot2.text);
    assert.equal(rot2.body.previous_secret_expires_at, null);
    rx.secrets = [oldSecret, newSecret, rot2.body.secret];
    await testSend(app, endpointId);
    const all = await rx.waitFor((r) => r.length === 2);
    assert.deepEqual(all[1]!.verifiedBy, [2], 'only the newest secret signs');
    for (const s of [oldSecret, newSecret, rot2.body.secret]) assert.ok(!app.logs.join('').includes(s.slice(6)));
  });

  it('refuses private and loopback URLs without the operator setting (400), bad URLs (400), beyond the quota (409), members (403)', async (t) => {
    const app = await startTestApp(t, { mode: 'pglite', env: { WEBHOOK_MAX_ENDPOINTS_PER_ORG: 2 } });
    const make = (url: string, key?: string) =>
      request(app.url, 'POST', '/v1/webhooks', { key: key ?? app.adminKey, body: { url, event_types: ['turn.failed'] } });
    for (const [url, why] of [
      ['http://127.0.0.1:9/hook', /loopback.*WEBHOOK_ALLOWED_PRIVATE_HOSTS/],
      ['http://10.1.2.3/hook', /private/],
      ['http://[::1]:8080/', /loopback/],
      ['http://169.254.169.254/latest', /link-local/],
      ['http://localhost:3000/x', /loopback/],
      ['ftp://example.com/x', /./],
      ['http://user:pw@93.184.215.14/', /credentials/],
    ] as const) {
      const r = await make(url);
      assert.equal(r.status, 400, `${url}: ${r.text}`);
      assert.match(r.body.error, why, url);
    }
    const list = await app.request('GET', '/v1/webhooks');
    assert.equal(list.body.total, 0, 'nothing was created');
    // Deltas cannot be subscribed to; unknown types neither.
    const delta = await app.request('POST', '/v1/webhooks', {
      body: { url: 'http://93.184.215.14/', event_types: ['output.message.delta'] },
    });
    assert.equal(delta.status, 400);
    // Public literal addresses pass the policy (no connection is made at creation).
    for (let i = 0; i < 2; i++) assert.equal((await make(`http://93.184.215.14/h${i}`)).status, 201);
    const third = await make('http://93.184.215.14/h3');
    assert.equal(third.status, 409, third.text);
    // A patch to a private URL is refused as well.
    const id = (await app.request('GET', '/v1/webhooks')).body.data[0].id;
    const patch = await app.request('PATCH', `/v1/webhooks/${id}`, { body: { url: 'http://192.168.1.1/' } });
    assert.equal(patch.status, 400, patch.text);
    // Members have no access; another organisation's admin sees none of them.
    const admin2 = await createOrgWithAdmin(app, 'Hooks Two');
    const m = await createUser(app, app.adminKey, 'member');
    const mk = await createKey(app, (await login(app, m.email, m.password)).access_token, 'member key');
    assert.equal((await make('http://93.184.215.14/m', mk.key)).status, 403);
    assert.equal((await request(app.url, 'GET', '/v1/webhooks', { key: mk.key })).status, 403);
    const other = await request(app.url, 'GET', '/v1/webhooks', { key: admin2.key });
    assert.equal(other.body.total, 0);
    assert.equal((await request(app.url, 'GET', `/v1/webhooks/${id}`, { key: admin2.key })).status, 403);
    assert.equal((await request(app.url, 'DELETE', `/v1/webhooks/${id}`, { key: admin2.key })).status, 403);
    assert.equal((await request(app.url, 'GET', `/v1/webhooks/${crypto.randomUUID()}`, { key: admin2.key })).status, 404);
    assert.equal((await app.request('DELETE', `/v1/webhooks/${id}`)).status, 204);
  });
});
