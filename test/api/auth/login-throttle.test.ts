import assert from 'node:assert/strict';
import { test } from 'node:test';
import { request, startTestApp, type TestApp } from '../../helpers/app.js';
import { SecretLedger, createOrgWithAdmin, uniqueEmail } from './helpers.js';

const attempt = (app: TestApp, email: string, password: string) =>
  request(app.url, 'POST', '/v1/auth/login', { key: null, body: { email, password } });

test('login throttling per email (default 5 attempts / 15 min) - 429 with Retry-After, also for the right password', async (t) => {
  const secrets = new SecretLedger();
  const app = await startTestApp(t, { mode: 'postgres' });
  const acme = await createOrgWithAdmin(app, 'Throttle', secrets);
  for (let i = 0; i < 5; i++) assert.equal((await attempt(app, acme.email, `wrong-${i}-password`)).status, 401);
  const blocked = await attempt(app, acme.email, 'wrong-again-password');
  assert.equal(blocked.status, 429);
  assert.deepEqual(blocked.body, { error: 'Too many requests', status: 429 });
  const retryAfter = Number(blocked.headers.get('retry-after'));
  assert.ok(Number.isInteger(retryAfter) && retryAfter > 850 && retryAfter <= 900, `Retry-After ${retryAfter}`);
  assert.equal(
    (await attempt(app, acme.email.toUpperCase(), acme.password)).status,
    429,
    'the right password does not bypass the throttle',
  );
  assert.equal((await attempt(app, uniqueEmail('other'), 'whatever-password')).status, 401, 'another email is not throttled');

  await t.test('a successful login gives its attempts back', async () => {
    const user = await createOrgWithAdmin(app, 'Recover', secrets);
    for (let i = 0; i < 4; i++) assert.equal((await attempt(app, user.email, 'bad-password')).status, 401);
    assert.equal((await attempt(app, user.email, user.password)).status, 200);
    for (let i = 0; i < 4; i++) assert.equal((await attempt(app, user.email, 'bad-password')).status, 401);
  });

  await t.test('logs name no email, password or token', () => {
    secrets.assertAbsentFrom(app.logs);
    assert.ok(!app.logs.join('').includes('wrong-again-password'));
  });
});

test('login throttling per IP (LOGIN_MAX_ATTEMPTS_PER_IP=6) - many emails from one address are cut off', async (t) => {
  const app = await startTestApp(t, { mode: 'postgres', env: { LOGIN_MAX_ATTEMPTS_PER_IP: 6, LOGIN_THROTTLE_WINDOW_S: 60 } });
  for (let i = 0; i < 6; i++) assert.equal((await attempt(app, uniqueEmail('spray'), 'spray-password')).status, 401);
  const blocked = await attempt(app, uniqueEmail('spray'), 'spray-password');
  assert.equal(blocked.status, 429);
  const retryAfter = Number(blocked.headers.get('retry-after'));
  assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
});

test('login timing - unknown email vs wrong password take about the same time (both run one scrypt)', async (t) => {
  const app = await startTestApp(t, { mode: 'postgres', env: { LOGIN_MAX_ATTEMPTS_PER_EMAIL: 10_000, LOGIN_MAX_ATTEMPTS_PER_IP: 10_000 } });
  const acme = await createOrgWithAdmin(app, 'Timing');
  const time = async (email: string) => {
    const t0 = performance.now();
    const r = await attempt(app, email, 'definitely-wrong');
    assert.equal(r.status, 401);
    return performance.now() - t0;
  };
  for (let i = 0; i < 2; i++) await time(acme.email), await time(uniqueEmail('warm'));
  const known: number[] = [];
  const unknown: number[] = [];
  for (let i = 0; i < 21; i++) {
    known.push(await time(acme.email));
    unknown.push(await time(uniqueEmail('ghost')));
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const mk = median(known);
  const mu = median(unknown);
  t.diagnostic(`median wrong password ${mk.toFixed(1)} ms, unknown email ${mu.toFixed(1)} ms, difference ${(mk - mu).toFixed(1)} ms`);
  // Both paths do one user lookup and one scrypt. Skipping scrypt on one path would make it several
  // times faster than the other; scheduling noise on a loaded machine stays well below half.
  assert.ok(Math.abs(mk - mu) < Math.max(20, 0.5 * Math.min(mk, mu)), `medians ${mk.toFixed(1)} vs ${mu.toFixed(1)} ms`);
  assert.ok(mu > 20, 'the unknown-email path really runs scrypt');
});
