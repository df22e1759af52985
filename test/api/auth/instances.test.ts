import assert from 'node:assert/strict';
import { test } from 'node:test';
import { request, startTestApp } from '../../helpers/app.js';
import { loadJwtSecret } from '../../../src/auth/index.js';
import { SecretLedger, createKey, createOrgWithAdmin, login } from './helpers.js';

test('two instances on one database - shared JWT secret, immediate key revocation and logout everywhere', async (t) => {
  const secrets = new SecretLedger();
  const a = await startTestApp(t, { mode: 'postgres' });
  const b = await startTestApp(t, { mode: 'postgres', databaseUrl: a.databaseUrl });
  secrets.add(a.adminKey);
  const acme = await createOrgWithAdmin(a, 'Twins', secrets);
  const me = (url: string, credential: string) => request(url, 'GET', '/v1/auth/me', { key: credential });

  await t.test('a token issued by one instance is accepted by the other (the generated secret is shared)', async () => {
    const rows = await a.app.services.store.sql<{ n: number }>('select count(*)::int as n from auth_secrets');
    assert.equal(rows[0]!.n, 1, 'one secret, generated once');
    const p = await login(a, acme.email, acme.password, secrets);
    assert.equal((await me(b.url, p.access_token)).status, 200);
    const r = await request(b.url, 'POST', '/v1/auth/refresh', { key: null, body: { refresh_token: p.refresh_token } });
    assert.equal(r.status, 200);
    secrets.add(r.body.access_token);
    secrets.add(r.body.refresh_token);
    assert.equal((await me(a.url, r.body.access_token)).status, 200);
  });

  await t.test('a key revoked on instance A fails on the very next request on instance B', async () => {
    const k = await createKey(a, acme.key, 'doomed', secrets);
    // Warm both instances with the key first, so any cache would hold it.
    for (const app of [a, b, a, b]) assert.equal((await me(app.url, k.key)).status, 200);
    const started = performance.now();
    const revoke = await request(a.url, 'DELETE', `/v1/auth/api-keys/${k.id}`, { key: acme.key });
    assert.equal(revoke.status, 204);
    // The answer waits out the other instances' credential caches (AUTH_CACHE_TTL_MS, 1000 by default).
    assert.ok(performance.now() - started >= 990, 'the revocation answered only after the cache window');
    const [onB, onA] = await Promise.all([me(b.url, k.key), me(a.url, k.key)]);
    assert.deepEqual(onB.body, { error: 'Unauthorized', status: 401 });
    assert.equal(onA.status, 401);
  });

  await t.test('a key revoked while the other instance is under load with it: no request after the revocation succeeds', async () => {
    const k = await createKey(a, acme.key, 'busy', secrets);
    let revokedAt = 0;
    const lateSuccesses: number[] = [];
    let lateRequests = 0;
    let stop = false;
    const hammer = (async () => {
      while (!stop) {
        const sent = performance.now();
        const r = await me(b.url, k.key);
        if (revokedAt && sent > revokedAt) {
          lateRequests++;
          if (r.status !== 401) lateSuccesses.push(sent - revokedAt);
        }
      }
    })();
    await new Promise((r) => setTimeout(r, 100));
    const res = await request(a.url, 'DELETE', `/v1/auth/api-keys/${k.id}`, { key: acme.key });
    revokedAt = performance.now();
    assert.equal(res.status, 204);
    await new Promise((r) => setTimeout(r, 200));
    stop = true;
    await hammer;
    assert.ok(lateRequests > 0, 'instance B was queried after the revocation');
    assert.deepEqual(lateSuccesses, [], 'requests sent after the revocation answered must all be 401');
  });

  await t.test('logout on instance A ends the login on instance B', async () => {
    const p = await login(b, acme.email, acme.password, secrets);
    assert.equal((await me(a.url, p.access_token)).status, 200);
    assert.equal((await request(a.url, 'POST', '/v1/auth/logout', { key: p.access_token })).status, 204);
    assert.equal((await me(b.url, p.access_token)).status, 401);
    assert.equal((await request(b.url, 'POST', '/v1/auth/refresh', { key: null, body: { refresh_token: p.refresh_token } })).status, 401);
  });

  await t.test('logs of both instances contain no secret used here', () => {
    secrets.add(acme.password);
    secrets.assertAbsentFrom([...a.logs, ...b.logs]);
  });
});

test('credential checks are reused for AUTH_CACHE_TTL_MS, and only then', async (t) => {
  const ttlMs = 1500;
  const app = await startTestApp(t, { mode: 'postgres', env: { AUTH_CACHE_TTL_MS: ttlMs } });
  const secrets = new SecretLedger();
  const acme = await createOrgWithAdmin(app, 'Cached', secrets);
  const me = (credential: string) => request(app.url, 'GET', '/v1/auth/me', { key: credential });

  await t.test('a key revoked behind the service (no API call, so no invalidation) works until the window ends', async () => {
    const k = await createKey(app, acme.key, 'behind-the-back', secrets);
    assert.equal((await me(k.key)).status, 200);
    const checkedAt = performance.now();
    await app.app.services.store.sql('update api_keys set revoked_at = now() where id = ?', [k.id]);
    assert.equal((await me(k.key)).status, 200, 'served from the cache, not the database');
    await new Promise((r) => setTimeout(r, ttlMs - (performance.now() - checkedAt) + 50));
    assert.equal((await me(k.key)).status, 401, 'the database is asked again once the window is over');
  });

  await t.test('a failed check is not cached: the same unknown key is looked up every time', async () => {
    const k = await createKey(app, acme.key, 'flip', secrets);
    await app.app.services.store.sql('update api_keys set revoked_at = now() where id = ?', [k.id]);
    assert.equal((await me(k.key)).status, 401);
    await app.app.services.store.sql('update api_keys set revoked_at = null where id = ?', [k.id]);
    assert.equal((await me(k.key)).status, 200);
  });

  await t.test('an API revocation clears the cache at once and answers after the window', async () => {
    const k = await createKey(app, acme.key, 'api-revoked', secrets);
    assert.equal((await me(k.key)).status, 200);
    const started = performance.now();
    assert.equal((await request(app.url, 'DELETE', `/v1/auth/api-keys/${k.id}`, { key: acme.key })).status, 204);
    assert.ok(performance.now() - started >= ttlMs - 10);
    assert.equal((await me(k.key)).status, 401);
  });
});

test('loadJwtSecret - concurrent first calls (as from instances starting at once) agree on one generated secret', async (t) => {
  const a = await startTestApp(t, { mode: 'postgres' });
  const b = await startTestApp(t, { mode: 'postgres', databaseUrl: a.databaseUrl });
  await a.app.services.store.sql('delete from auth_secrets');
  const stores = [a.app.services.store, b.app.services.store];
  const keys = await Promise.all(
    Array.from({ length: 8 }, (_, i) => loadJwtSecret({ store: stores[i % 2]!, keyring: a.app.services.keyring })),
  );
  const distinct = new Set(keys.map((k) => Buffer.from(k.key).toString('hex')));
  assert.equal(distinct.size, 1);
  assert.ok(keys.every((k) => k.source === 'database' && k.key.length >= 32));
  const rows = await a.app.services.store.sql<{ n: number }>('select count(*)::int as n from auth_secrets');
  assert.equal(rows[0]!.n, 1);
  const configured = await loadJwtSecret({ store: stores[0]!, keyring: a.app.services.keyring, configured: 'c'.repeat(40) });
  assert.equal(configured.source, 'config');
});
