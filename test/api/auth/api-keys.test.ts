import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request, startTestApp, type TestApp } from '../../helpers/app.js';
import { SecretLedger, createKey, createOrgWithAdmin, createUser, login, type OrgAdmin } from './helpers.js';

const cleanup: (() => unknown)[] = [];
after(async () => {
  for (const fn of cleanup.reverse()) await fn();
});

describe('API keys - /v1/auth/api-keys', () => {
  const secrets = new SecretLedger();
  let app: TestApp;
  let acme: OrgAdmin;
  let other: OrgAdmin;
  let member: { id: string; email: string; password: string; key: string; keyId: string };

  before(async () => {
    app = await startTestApp({ after: (fn: () => unknown) => cleanup.push(fn) }, { mode: 'postgres' });
    secrets.add(app.adminKey);
    acme = await createOrgWithAdmin(app, 'Keys', secrets);
    other = await createOrgWithAdmin(app, 'Other', secrets);
    const u = await createUser(app, acme.key, 'member', secrets);
    const p = await login(app, u.email, u.password, secrets);
    const k = await createKey(app, p.access_token, 'member key', secrets);
    member = { ...u, key: k.key, keyId: k.id };
  });

  const call = (method: string, path: string, credential: string, body?: unknown) =>
    request(app.url, method, path, { key: credential, body });

  it('POST - returns the key once; listings show only id, name, prefix and dates', async () => {
    const r = await call('POST', '/v1/auth/api-keys', acme.key, { name: 'ci' });
    assert.equal(r.status, 201);
    secrets.add(r.body.key);
    assert.match(r.body.key, /^ask_[A-Za-z0-9_-]{43}$/);
    assert.equal(r.body.prefix, r.body.key.slice(0, 12));
    assert.equal(r.body.user_id, acme.userId);
    assert.equal(r.body.expires_at, null);
    assert.equal(r.body.key_hash, undefined);
    const list = await call('GET', '/v1/auth/api-keys', acme.key);
    assert.equal(list.status, 200);
    const item = list.body.data.find((k: { id: string }) => k.id === r.body.id);
    assert.deepEqual(Object.keys(item).sort(), ['created_at', 'expires_at', 'id', 'last_used_at', 'name', 'prefix', 'user_id']);
    assert.ok(!list.text.includes(r.body.key), 'the key is never listed');
    assert.equal((await call('GET', '/v1/auth/me', r.body.key)).body.api_key_id, r.body.id);
  });

  it('GET - own keys by default; scope=org lists the organisation for admins, 403 for members', async () => {
    const own = await call('GET', '/v1/auth/api-keys', member.key);
    assert.deepEqual(
      own.body.data.map((k: { id: string }) => k.id),
      [member.keyId],
    );
    assert.equal(own.body.total, 1);
    assert.equal((await call('GET', '/v1/auth/api-keys?scope=org', member.key)).status, 403);
    const org = await call('GET', '/v1/auth/api-keys?scope=org', acme.key);
    const ids = org.body.data.map((k: { id: string }) => k.id);
    assert.ok(ids.includes(member.keyId) && ids.includes(acme.keyId));
    assert.ok(!ids.includes(other.keyId), "another organisation's keys are never listed");
    assert.equal((await call('GET', '/v1/auth/api-keys?scope=everything', acme.key)).status, 400);
  });

  it('last_used_at is recorded when a key is used', async () => {
    const k = await createKey(app, acme.key, 'usage', secrets);
    await call('GET', '/v1/auth/me', k.key);
    const list = await call('GET', '/v1/auth/api-keys', acme.key);
    const item = list.body.data.find((x: { id: string }) => x.id === k.id);
    assert.ok(item.last_used_at && Date.now() - Date.parse(item.last_used_at) < 60_000);
  });

  it("DELETE - a member revokes their own key; not a colleague's (403); an admin revokes any key of the org", async () => {
    const mine = await createKey(app, member.key, 'mine', secrets);
    assert.equal((await call('DELETE', `/v1/auth/api-keys/${mine.id}`, member.key)).status, 204);
    assert.equal((await call('GET', '/v1/auth/me', mine.key)).status, 401);
    assert.equal((await call('DELETE', `/v1/auth/api-keys/${mine.id}`, member.key)).status, 204, 'idempotent');

    const adminKey = await createKey(app, acme.key, 'admin only', secrets);
    assert.equal((await call('DELETE', `/v1/auth/api-keys/${adminKey.id}`, member.key)).status, 403);
    assert.equal((await call('GET', '/v1/auth/me', adminKey.key)).status, 200, 'still valid');

    const victim = await createKey(app, member.key, 'revoked by admin', secrets);
    assert.equal((await call('DELETE', `/v1/auth/api-keys/${victim.id}`, acme.key)).status, 204);
    assert.equal((await call('GET', '/v1/auth/me', victim.key)).status, 401);
    const listed = await call('GET', '/v1/auth/api-keys', member.key);
    assert.ok(!listed.body.data.some((k: { id: string }) => k.id === victim.id), 'revoked keys are not listed');
  });

  it("DELETE - another organisation's key is 403 and stays valid; an unknown id is 404", async () => {
    assert.deepEqual((await call('DELETE', `/v1/auth/api-keys/${acme.keyId}`, other.key)).body, { error: 'Forbidden', status: 403 });
    assert.equal((await call('GET', '/v1/auth/me', acme.key)).status, 200);
    assert.equal((await call('DELETE', '/v1/auth/api-keys/01890a5d-ac96-774b-bcce-b302099a8057', acme.key)).status, 404);
    assert.equal((await call('DELETE', '/v1/auth/api-keys/not-a-uuid', acme.key)).status, 400);
  });

  it('expiry - a key with expires_at stops working then; a past expires_at is refused', async () => {
    const past = await call('POST', '/v1/auth/api-keys', acme.key, { name: 'past', expires_at: new Date(Date.now() - 1000).toISOString() });
    assert.equal(past.status, 400);
    const soon = await call('POST', '/v1/auth/api-keys', acme.key, { name: 'soon', expires_at: new Date(Date.now() + 1200).toISOString() });
    assert.equal(soon.status, 201);
    secrets.add(soon.body.key);
    assert.equal((await call('GET', '/v1/auth/me', soon.body.key)).status, 200);
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal((await call('GET', '/v1/auth/me', soon.body.key)).status, 401);
  });

  it("a deleted user's keys stop working at once", async () => {
    const u = await createUser(app, acme.key, 'member', secrets);
    const p = await login(app, u.email, u.password, secrets);
    const k = await createKey(app, p.access_token, 'leaver', secrets);
    assert.equal((await call('DELETE', `/v1/users/${u.id}`, acme.key)).status, 204);
    assert.equal((await call('GET', '/v1/auth/me', k.key)).status, 401);
    assert.equal((await call('GET', '/v1/auth/me', p.access_token)).status, 401);
  });

  it('logs - no key, token or password of this suite appears', () => {
    secrets.add(member.password);
    secrets.assertAbsentFrom(app.logs);
  });
});
