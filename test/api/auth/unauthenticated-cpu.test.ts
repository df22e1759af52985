import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { test } from 'node:test';
import { request, startTestApp } from '../../helpers/app.js';
import { createOrgWithAdmin, login } from './helpers.js';

/** Issue 30 item 7: logins and refreshes need no credential, so their cost is bounded per instance. */

const from = (ip: string) => ({ 'X-Forwarded-For': ip });

test('a burst of logins from many addresses: the hash queue fills, the rest get 429 at once, /health stays fast', async (t) => {
  const app = await startTestApp(t, {
    env: { TRUST_PROXY: 'loopback', PASSWORD_HASH_CONCURRENCY: 1, PASSWORD_HASH_QUEUE_MAX: 3 },
  });
  const admin = await createOrgWithAdmin(app, `Flood${randomBytes(3).toString('hex')}`);
  // 60 addresses, each well within its own login throttle (30 per address, 5 per email).
  const burst = Array.from({ length: 60 }, (_, i) =>
    request(app.url, 'POST', '/v1/auth/login', {
      key: null,
      body: { email: `nobody-${i}@example.test`, password: 'wrong password' },
      headers: from(`10.30.7.${i + 1}`),
    }),
  );
  const health: number[] = [];
  const probing = (async () => {
    for (let i = 0; i < 10; i++) {
      const started = performance.now();
      const r = await request(app.url, 'GET', '/health');
      health.push(performance.now() - started);
      assert.equal(r.status, 200);
    }
  })();
  const [answers] = await Promise.all([Promise.all(burst), probing]);
  const refused = answers.filter((r) => r.status === 429);
  const checked = answers.filter((r) => r.status === 401);
  assert.equal(refused.length + checked.length, 60, answers.map((r) => r.status).join(','));
  assert.ok(refused.length >= 30, `${refused.length} refused, ${checked.length} checked`);
  assert.ok(checked.length >= 4, 'the running hash and its queue were served');
  for (const r of refused) {
    assert.equal(r.headers.get('retry-after'), '1');
    assert.deepEqual(r.body, { error: 'Too many sign-ins in progress; retry shortly', status: 429 });
  }
  // A loaded CI host is slow, but not hash-queue slow: the probes never waited behind 60 scrypts.
  assert.ok(Math.max(...health) < 2_000, `health probes took ${health.map(Math.round).join(', ')} ms`);

  // A refused attempt was no guess: the addresses keep their budget, and a real login works from one of them.
  const ok = await request(app.url, 'POST', '/v1/auth/login', {
    key: null,
    body: { email: admin.email, password: admin.password },
    headers: from(refused.length ? '10.30.7.60' : '10.30.7.1'),
  });
  assert.equal(ok.status, 200, ok.text);
});

test('refresh is throttled per client address: made-up tokens get 429 after the limit; successes do not count', async (t) => {
  const app = await startTestApp(t, { env: { TRUST_PROXY: 'loopback', REFRESH_MAX_FAILURES_PER_IP: 5 } });
  const admin = await createOrgWithAdmin(app, `Refresh${randomBytes(3).toString('hex')}`);
  const refresh = (token: string, ip: string) =>
    request(app.url, 'POST', '/v1/auth/refresh', { key: null, body: { refresh_token: token }, headers: from(ip) });

  // Successes give their attempt back: a client that refreshes often is never throttled.
  let token = (await login(app, admin.email, admin.password)).refresh_token;
  for (let i = 0; i < 8; i++) {
    const r = await refresh(token, '10.31.0.1');
    assert.equal(r.status, 200, r.text);
    token = r.body.refresh_token;
  }

  const guesses = await Promise.all(Array.from({ length: 12 }, () => refresh(`rt_${randomBytes(32).toString('base64url')}`, '10.31.0.2')));
  const statuses = guesses.map((r) => r.status).sort();
  assert.deepEqual(statuses, [...Array(5).fill(401), ...Array(7).fill(429)]);
  const limited = guesses.find((r) => r.status === 429)!;
  assert.ok(Number(limited.headers.get('retry-after')) > 0);
  assert.deepEqual(limited.body, { error: 'Too many requests', status: 429 });

  // The throttled address is refused before its token is looked at (the token stays unused) ...
  const throttled = await refresh(token, '10.31.0.2');
  assert.equal(throttled.status, 429);
  // ... and another address still refreshes with it.
  const elsewhere = await refresh(token, '10.31.0.3');
  assert.equal(elsewhere.status, 200, elsewhere.text);
});
