import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SignJWT } from 'jose';
import { request, startTestApp, type TestApp } from '../../helpers/app.js';
import { SecretLedger, createKey, createOrgWithAdmin, login, newPassword, uniqueEmail, type OrgAdmin } from './helpers.js';

const cleanup: (() => unknown)[] = [];
after(async () => {
  for (const fn of cleanup.reverse()) await fn();
});
const hooks = { after: (fn: () => unknown) => cleanup.push(fn) };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('auth tokens - login, refresh rotation, reuse detection, logout', () => {
  const secrets = new SecretLedger();
  let app: TestApp;
  let acme: OrgAdmin;

  before(async () => {
    app = await startTestApp(hooks, { mode: 'postgres' });
    secrets.add(app.adminKey);
    acme = await createOrgWithAdmin(app, 'Acme', secrets);
  });

  const me = (credential: string) => request(app.url, 'GET', '/v1/auth/me', { key: credential });
  const refresh = (token: string) => request(app.url, 'POST', '/v1/auth/refresh', { key: null, body: { refresh_token: token } });

  it('POST /v1/auth/login - returns a Bearer pair whose access token authenticates GET /v1/auth/me', async () => {
    const pair = await login(app, acme.email, acme.password, secrets);
    assert.equal(pair.token_type, 'Bearer');
    assert.equal(pair.expires_in, 900);
    assert.match(pair.refresh_token, /^rt_/);
    const r = await me(pair.access_token);
    assert.equal(r.status, 200);
    assert.equal(r.body.user.id, acme.userId);
    assert.equal(r.body.user.email, acme.email);
    assert.equal(r.body.organization.id, acme.orgId);
    assert.equal(r.body.via, 'access_token');
    assert.equal(r.body.user.password_hash, undefined);
    assert.deepEqual(Object.keys(r.body.user).sort(), [
      'created_at',
      'email',
      'id',
      'name',
      'operator',
      'organization_id',
      'role',
      'updated_at',
    ]);
    assert.equal(r.body.user.organization_id, acme.orgId);
    assert.equal(r.body.user.role, 'admin');
    const org = await request(app.url, 'GET', '/v1/orgs', { key: pair.access_token });
    assert.deepEqual(r.body.organization, org.body.data[0], 'the same organisation view as GET /v1/orgs');
    assert.ok(!Number.isNaN(Date.parse(r.body.user.created_at)) && r.body.user.created_at.endsWith('Z'));
  });

  it('POST /v1/auth/login - emails are case-insensitive', async () => {
    await login(app, acme.email.toUpperCase(), acme.password, secrets);
  });

  it('POST /v1/auth/login - unknown email and wrong password give the same 401 body', async () => {
    const wrongPassword = await request(app.url, 'POST', '/v1/auth/login', {
      key: null,
      body: { email: acme.email, password: 'not-the-password' },
    });
    const unknownEmail = await request(app.url, 'POST', '/v1/auth/login', {
      key: null,
      body: { email: 'nobody@example.test', password: 'not-the-password' },
    });
    const noPassword = await request(app.url, 'POST', '/v1/auth/login', {
      key: null,
      body: { email: 'admin@localhost', password: 'not-the-password' },
    });
    for (const r of [wrongPassword, unknownEmail, noPassword]) {
      assert.equal(r.status, 401);
      assert.equal(r.text, '{"error":"Unauthorized","status":401}');
    }
  });

  it('Authorization - accepts `Bearer <key>`, `ApiKey <key>` and a bare key; rejects garbage', async () => {
    for (const header of [`Bearer ${acme.key}`, `ApiKey ${acme.key}`, acme.key, `bearer ${acme.key}`]) {
      const r = await request(app.url, 'GET', '/v1/auth/me', { key: null, headers: { authorization: header } });
      assert.equal(r.status, 200, header.slice(0, 8));
      assert.equal(r.body.via, 'api_key');
      assert.equal(r.body.api_key_id, acme.keyId);
    }
    for (const header of ['Bearer', 'Bearer ask_nope', 'Basic dXNlcjpwYXNz', 'Bearer a.b.c', `Bearer ${acme.key}x`]) {
      const r = await request(app.url, 'GET', '/v1/auth/me', { key: null, headers: { authorization: header } });
      assert.deepEqual(r.body, { error: 'Unauthorized', status: 401 }, header.slice(0, 12));
    }
  });

  it('Authorization - a JWT signed with another secret, another issuer or alg none is 401', async () => {
    const pair = await login(app, acme.email, acme.password, secrets);
    const claims = JSON.parse(Buffer.from(pair.access_token.split('.')[1]!, 'base64url').toString());
    const forged = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode('x'.repeat(64)));
    const none = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${pair.access_token.split('.')[1]}.`;
    const [h, p, s] = pair.access_token.split('.');
    // Change the subject's last character to a different one: replacing it with a fixed '0'
    // left the token untouched whenever the user id already ended in '0' (1 run in 16).
    const otherSub = acme.userId.replace(/.$/, (c) => (c === '0' ? '1' : '0'));
    assert.notEqual(otherSub, claims.sub);
    const tampered = `${h}.${Buffer.from(JSON.stringify({ ...claims, sub: otherSub })).toString('base64url')}.${s}`;
    assert.notEqual(tampered, pair.access_token);
    // Flip one bit of the signature's first byte: changing trailing base64url characters can
    // leave the decoded bytes unchanged (their low bits are padding), which made this flaky.
    const sig = Buffer.from(s!, 'base64url');
    sig[0] = sig[0]! ^ 0x01;
    const badSignature = `${h}.${p}.${sig.toString('base64url')}`;
    for (const token of [forged, none + 'x', tampered, badSignature]) {
      assert.equal((await me(token)).status, 401);
    }
  });

  it('POST /v1/auth/refresh - rotates: the new pair works, the old refresh token no longer does', async () => {
    const p1 = await login(app, acme.email, acme.password, secrets);
    const r2 = await refresh(p1.refresh_token);
    assert.equal(r2.status, 200);
    secrets.add(r2.body.access_token);
    secrets.add(r2.body.refresh_token);
    assert.notEqual(r2.body.refresh_token, p1.refresh_token);
    assert.equal(r2.body.token_type, 'Bearer');
    assert.equal((await me(r2.body.access_token)).status, 200);
    const r3 = await refresh(r2.body.refresh_token);
    assert.equal(r3.status, 200);
    secrets.add(r3.body.access_token);
    secrets.add(r3.body.refresh_token);
    assert.equal((await me(r3.body.access_token)).status, 200);
  });

  it('POST /v1/auth/refresh - presenting a rotated token revokes its family (descendants and access tokens)', async () => {
    const other = await login(app, acme.email, acme.password, secrets); // a second, unrelated login
    const p1 = await login(app, acme.email, acme.password, secrets);
    const r2 = await refresh(p1.refresh_token);
    secrets.add(r2.body.access_token);
    secrets.add(r2.body.refresh_token);
    assert.equal(r2.status, 200);

    const replay = await refresh(p1.refresh_token); // the stolen copy
    assert.deepEqual(replay.body, { error: 'Unauthorized', status: 401 });
    assert.equal((await refresh(r2.body.refresh_token)).status, 401, 'the legitimate successor is revoked too');
    assert.equal((await me(r2.body.access_token)).status, 401, "the family's access tokens stop working");
    assert.equal((await me(p1.access_token)).status, 401);

    assert.equal((await me(other.access_token)).status, 200, 'other logins are untouched');
    assert.equal((await refresh(other.refresh_token)).status, 200);
    assert.ok(
      app.logs.some((l) => l.includes('refresh_token_reuse')),
      'the reuse is logged',
    );
  });

  it('POST /v1/auth/refresh - two concurrent uses of one token: at most one succeeds', async () => {
    const p = await login(app, acme.email, acme.password, secrets);
    const rs = await Promise.all([refresh(p.refresh_token), refresh(p.refresh_token)]);
    for (const r of rs) if (r.status === 200) secrets.add(r.body.refresh_token), secrets.add(r.body.access_token);
    assert.ok(rs.filter((r) => r.status === 200).length <= 1);
    assert.ok(rs.some((r) => r.status === 401));
  });

  it('POST /v1/auth/refresh - unknown or malformed tokens are 401/400 with no detail', async () => {
    assert.deepEqual((await refresh('rt_nope')).body, { error: 'Unauthorized', status: 401 });
    assert.equal((await request(app.url, 'POST', '/v1/auth/refresh', { key: null, body: {} })).status, 400);
  });

  it('POST /v1/auth/logout - ends the login: its access and refresh tokens stop working at once', async () => {
    const keep = await login(app, acme.email, acme.password, secrets);
    const p = await login(app, acme.email, acme.password, secrets);
    const out = await request(app.url, 'POST', '/v1/auth/logout', { key: p.access_token });
    assert.equal(out.status, 204);
    assert.equal((await me(p.access_token)).status, 401);
    assert.equal((await refresh(p.refresh_token)).status, 401);
    assert.equal((await me(keep.access_token)).status, 200, 'another login of the same user stays');
    assert.equal((await me(acme.key)).status, 200, 'API keys stay');
    assert.equal((await request(app.url, 'POST', '/v1/auth/logout', { key: acme.key })).status, 204, 'no-op for an API key');
    assert.equal((await me(acme.key)).status, 200);
  });

  it('API keys created with an access token work like any key', async () => {
    const p = await login(app, acme.email, acme.password, secrets);
    const k = await createKey(app, p.access_token, 'from token', secrets);
    assert.equal((await me(k.key)).body.user.id, acme.userId);
  });

  it('logs - no key, token or password used in this suite appears in the captured logs', () => {
    secrets.add(acme.password);
    secrets.assertAbsentFrom(app.logs);
  });
});

describe('auth tokens - expiry (ACCESS_TOKEN_TTL_S=1)', () => {
  it('an access token is rejected once expired; the refresh token still yields a fresh one', async () => {
    const secrets = new SecretLedger();
    const app = await startTestApp(hooks, { mode: 'postgres', env: { ACCESS_TOKEN_TTL_S: 1 } });
    // Not createOrgWithAdmin: its API key is made with a 1 s token, which a slow moment outlives.
    const email = uniqueEmail('expiry');
    const password = secrets.add(newPassword());
    const org = await app.request('POST', '/v1/orgs', { body: { name: 'Expiry', admin: { email, name: 'Expiry admin', password } } });
    assert.equal(org.status, 201, org.text);
    const p = await login(app, email, password, secrets);
    assert.ok(p.expires_in <= 1);
    const claims = JSON.parse(Buffer.from(p.access_token.split('.')[1]!, 'base64url').toString());
    assert.equal(claims.exp - claims.iat, 1);
    const waitMs = claims.exp * 1000 - Date.now() + 50;
    await sleep(Math.max(0, waitMs));
    const expired = await request(app.url, 'GET', '/v1/auth/me', { key: p.access_token });
    assert.deepEqual(expired.body, { error: 'Unauthorized', status: 401 });
    const r = await request(app.url, 'POST', '/v1/auth/refresh', { key: null, body: { refresh_token: p.refresh_token } });
    assert.equal(r.status, 200);
    secrets.add(r.body.access_token);
    secrets.add(r.body.refresh_token);
    assert.equal((await request(app.url, 'GET', '/v1/auth/me', { key: r.body.access_token })).status, 200);
    secrets.assertAbsentFrom(app.logs);
  });
});

describe('auth tokens - embedded mode (PGlite)', () => {
  it('login, access token, refresh and API keys work on the embedded database too', async () => {
    const secrets = new SecretLedger();
    const app = await startTestApp(hooks, { mode: 'pglite' });
    const acme = await createOrgWithAdmin(app, 'Embedded', secrets);
    const p = await login(app, acme.email, acme.password, secrets);
    assert.equal((await request(app.url, 'GET', '/v1/auth/me', { key: p.access_token })).status, 200);
    assert.equal((await request(app.url, 'GET', '/v1/auth/me', { key: acme.key })).status, 200);
    const r = await request(app.url, 'POST', '/v1/auth/refresh', { key: null, body: { refresh_token: p.refresh_token } });
    assert.equal(r.status, 200);
    secrets.add(r.body.access_token);
    secrets.add(r.body.refresh_token);
    assert.equal((await request(app.url, 'POST', '/v1/auth/refresh', { key: null, body: { refresh_token: p.refresh_token } })).status, 401);
    assert.equal((await request(app.url, 'GET', '/v1/auth/me', { key: r.body.access_token })).status, 401, 'reuse revoked the family');
    const started = performance.now();
    assert.equal((await request(app.url, 'DELETE', `/v1/auth/api-keys/${acme.keyId}`, { key: acme.key })).status, 204);
    // One process owns PGlite: clearing its credential cache is enough, nothing to wait for.
    assert.ok(performance.now() - started < 900, 'no cache window to outwait in embedded mode');
    assert.equal((await request(app.url, 'GET', '/v1/auth/me', { key: acme.key })).status, 401);
    secrets.assertAbsentFrom(app.logs);
  });
});
