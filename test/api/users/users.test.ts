import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request, startTestApp, type TestApp } from '../../helpers/app.js';
import {
  SecretLedger,
  createKey,
  createOrgWithAdmin,
  createUser,
  login,
  newPassword,
  uniqueEmail,
  type OrgAdmin,
} from '../auth/helpers.js';

const cleanup: (() => unknown)[] = [];
after(async () => {
  for (const fn of cleanup.reverse()) await fn();
});

describe('users - /v1/users', () => {
  const secrets = new SecretLedger();
  let app: TestApp;
  let acme: OrgAdmin;
  let other: OrgAdmin;
  let memberKey: string;
  let memberId: string;

  before(async () => {
    app = await startTestApp({ after: (fn: () => unknown) => cleanup.push(fn) }, { mode: 'postgres' });
    secrets.add(app.adminKey);
    acme = await createOrgWithAdmin(app, 'People', secrets);
    other = await createOrgWithAdmin(app, 'Strangers', secrets);
    const m = await createUser(app, acme.key, 'member', secrets);
    memberId = m.id;
    memberKey = (await createKey(app, (await login(app, m.email, m.password, secrets)).access_token, 'm', secrets)).key;
  });

  const call = (method: string, path: string, credential: string, body?: unknown) =>
    request(app.url, method, path, { key: credential, body });

  it('POST - an admin creates a member or an admin in the own organisation; the password hash is never returned', async () => {
    const email = uniqueEmail('New.Person');
    const password = secrets.add(newPassword());
    const r = await call('POST', '/v1/users', acme.key, { email, name: 'New Person', password, role: 'admin' });
    assert.equal(r.status, 201);
    assert.equal(r.body.organization_id, acme.orgId);
    assert.equal(r.body.email, email.toLowerCase());
    assert.equal(r.body.role, 'admin');
    assert.equal(r.body.operator, false);
    assert.ok(!('password_hash' in r.body) && !r.text.includes('scrypt'));
    const p = await login(app, email, password, secrets);
    assert.equal((await call('GET', '/v1/auth/me', p.access_token)).body.user.role, 'admin');
  });

  it('POST - 409 for an email in use (in any organisation), 400 for a short password or unknown role', async () => {
    assert.equal(
      (
        await call('POST', '/v1/users', acme.key, {
          email: other.email.toUpperCase(),
          name: 'Dup',
          password: newPassword(),
          role: 'member',
        })
      ).status,
      409,
    );
    assert.equal(
      (await call('POST', '/v1/users', acme.key, { email: uniqueEmail('s'), name: 'S', password: 'short', role: 'member' })).status,
      400,
    );
    assert.equal(
      (await call('POST', '/v1/users', acme.key, { email: uniqueEmail('s'), name: 'S', password: newPassword(), role: 'owner' })).status,
      400,
    );
    assert.equal(
      (await call('POST', '/v1/users', acme.key, { email: 'not-an-email', name: 'S', password: newPassword(), role: 'member' })).status,
      400,
    );
  });

  it('members may list and read users but not create, change or delete them (403)', async () => {
    const list = await call('GET', '/v1/users', memberKey);
    assert.equal(list.status, 200);
    assert.ok(list.body.data.every((u: { organization_id: string }) => u.organization_id === acme.orgId));
    assert.equal((await call('GET', `/v1/users/${acme.userId}`, memberKey)).status, 200);
    assert.deepEqual(
      (await call('POST', '/v1/users', memberKey, { email: uniqueEmail('x'), name: 'X', password: newPassword(), role: 'member' })).body,
      { error: 'Forbidden', status: 403 },
    );
    assert.equal((await call('PATCH', `/v1/users/${memberId}`, memberKey, { role: 'admin' })).status, 403);
    assert.equal((await call('DELETE', `/v1/users/${acme.userId}`, memberKey)).status, 403);
  });

  it("GET - lists only the own organisation; another organisation's user is 403", async () => {
    const list = await call('GET', '/v1/users', acme.key);
    const ids = list.body.data.map((u: { id: string }) => u.id);
    assert.ok(ids.includes(acme.userId) && ids.includes(memberId) && !ids.includes(other.userId));
    assert.equal(list.body.total, ids.length);
    assert.deepEqual((await call('GET', `/v1/users/${other.userId}`, acme.key)).body, { error: 'Forbidden', status: 403 });
    assert.equal((await call('PATCH', `/v1/users/${other.userId}`, acme.key, { role: 'member' })).status, 403);
    assert.equal((await call('DELETE', `/v1/users/${other.userId}`, acme.key)).status, 403);
    assert.equal((await call('GET', '/v1/users/01890a5d-ac96-774b-bcce-b302099a8057', acme.key)).status, 404);
  });

  it('PATCH - role changes apply at once, also to tokens already issued', async () => {
    const u = await createUser(app, acme.key, 'member', secrets);
    const p = await login(app, u.email, u.password, secrets);
    assert.equal(
      (await call('POST', '/v1/users', p.access_token, { email: uniqueEmail('y'), name: 'Y', password: newPassword(), role: 'member' }))
        .status,
      403,
    );
    const r = await call('PATCH', `/v1/users/${u.id}`, acme.key, { role: 'admin', name: 'Promoted' });
    assert.equal(r.status, 200);
    assert.equal(r.body.role, 'admin');
    assert.equal(r.body.name, 'Promoted');
    assert.equal((await call('GET', '/v1/auth/me', p.access_token)).body.user.role, 'admin');
    assert.equal(
      (await call('POST', '/v1/users', p.access_token, { email: uniqueEmail('z'), name: 'Z', password: newPassword(), role: 'member' }))
        .status,
      201,
    );
  });

  it('PATCH - a new password ends every login of the user (API keys stay)', async () => {
    const u = await createUser(app, acme.key, 'member', secrets);
    const p = await login(app, u.email, u.password, secrets);
    const k = await createKey(app, p.access_token, 'stays', secrets);
    const password = secrets.add(newPassword());
    assert.equal((await call('PATCH', `/v1/users/${u.id}`, acme.key, { password })).status, 200);
    assert.equal((await call('GET', '/v1/auth/me', p.access_token)).status, 401);
    assert.equal((await request(app.url, 'POST', '/v1/auth/refresh', { key: null, body: { refresh_token: p.refresh_token } })).status, 401);
    assert.equal((await call('GET', '/v1/auth/me', k.key)).status, 200);
    assert.equal(
      (await request(app.url, 'POST', '/v1/auth/login', { key: null, body: { email: u.email, password: u.password } })).status,
      401,
    );
    await login(app, u.email, password, secrets);
  });

  it('an organisation keeps at least one admin; the instance operator cannot be demoted or deleted (422)', async () => {
    const solo = await createOrgWithAdmin(app, 'Solo', secrets);
    assert.equal((await call('PATCH', `/v1/users/${solo.userId}`, solo.key, { role: 'member' })).status, 422);
    assert.equal((await call('DELETE', `/v1/users/${solo.userId}`, solo.key)).status, 422);
    const second = await createUser(app, solo.key, 'admin', secrets);
    assert.equal((await call('PATCH', `/v1/users/${solo.userId}`, solo.key, { role: 'member' })).status, 200);
    assert.equal((await call('PATCH', `/v1/users/${second.id}`, solo.key, { role: 'member' })).status, 403, 'solo is a member now');

    const me = await call('GET', '/v1/auth/me', app.adminKey);
    assert.equal(me.body.user.operator, true);
    const op = me.body.user.id;
    const deputy = await createUser(app, app.adminKey, 'admin', secrets);
    assert.equal((await call('PATCH', `/v1/users/${op}`, app.adminKey, { role: 'member' })).status, 422);
    assert.equal((await call('DELETE', `/v1/users/${op}`, app.adminKey)).status, 422);
    assert.equal((await call('DELETE', `/v1/users/${deputy.id}`, app.adminKey)).status, 204);
  });

  it('concurrent demotions of the last two admins leave one admin', async () => {
    const org = await createOrgWithAdmin(app, 'Race', secrets);
    const b = await createUser(app, org.key, 'admin', secrets);
    const rs = await Promise.all([
      call('PATCH', `/v1/users/${org.userId}`, org.key, { role: 'member' }),
      call('PATCH', `/v1/users/${b.id}`, org.key, { role: 'member' }),
    ]);
    const rows = await app.app.services.store.sql<{ n: number }>(
      "select count(*)::int as n from users where organization_id = ? and role = 'admin'",
      [org.orgId],
    );
    assert.equal(rows[0]!.n, 1, `statuses ${rs.map((r) => r.status)}`);
  });

  it('DELETE - removes the user; their keys and logins stop working', async () => {
    const u = await createUser(app, acme.key, 'member', secrets);
    const p = await login(app, u.email, u.password, secrets);
    assert.equal((await call('DELETE', `/v1/users/${u.id}`, acme.key)).status, 204);
    assert.equal((await call('GET', `/v1/users/${u.id}`, acme.key)).status, 404);
    assert.equal((await call('GET', '/v1/auth/me', p.access_token)).status, 401);
    assert.equal(
      (await request(app.url, 'POST', '/v1/auth/login', { key: null, body: { email: u.email, password: u.password } })).status,
      401,
    );
  });

  it('logs - no key, token or password of this suite appears', () => {
    secrets.assertAbsentFrom(app.logs);
  });
});
