import assert from 'node:assert/strict';
import { test } from 'node:test';
import { request, startTestApp } from '../../helpers/app.js';
import { SecretLedger, createOrgWithAdmin, createUser, login, newPassword, uniqueEmail } from '../auth/helpers.js';

test('organisations - /v1/orgs', async (t) => {
  const secrets = new SecretLedger();
  const app = await startTestApp(t, { mode: 'postgres' });
  secrets.add(app.adminKey);
  const call = (method: string, path: string, credential: string, body?: unknown) =>
    request(app.url, method, path, { key: credential, body });

  const acme = await createOrgWithAdmin(app, 'Acme', secrets);
  const globex = await createOrgWithAdmin(app, 'Globex', secrets);

  await t.test('POST - the operator creates an organisation with its first admin, who can log in', async () => {
    const email = uniqueEmail('First.Admin');
    const password = secrets.add(newPassword());
    const r = await call('POST', '/v1/orgs', app.adminKey, { name: 'Initech', admin: { email, name: 'First Admin', password } });
    assert.equal(r.status, 201);
    assert.equal(r.body.organization.name, 'Initech');
    assert.equal(r.body.admin.organization_id, r.body.organization.id);
    assert.equal(r.body.admin.role, 'admin');
    assert.equal(r.body.admin.operator, false);
    assert.ok(!r.text.includes(password) && !r.text.includes('scrypt'));
    const p = await login(app, email, password, secrets);
    const me = await call('GET', '/v1/auth/me', p.access_token);
    assert.equal(me.body.organization.id, r.body.organization.id);
  });

  await t.test('POST - 403 for everyone but the operator: org admins, members, other orgs', async () => {
    const member = await createUser(app, acme.key, 'member', secrets);
    const memberToken = (await login(app, member.email, member.password, secrets)).access_token;
    for (const credential of [acme.key, memberToken, globex.key]) {
      const r = await call('POST', '/v1/orgs', credential, {
        name: 'Nope',
        admin: { email: uniqueEmail('nope'), name: 'N', password: newPassword() },
      });
      assert.deepEqual(r.body, { error: 'Forbidden', status: 403 });
    }
    // The operator's own organisation's other admins are not operators either.
    const deputy = await createUser(app, app.adminKey, 'admin', secrets);
    const deputyToken = (await login(app, deputy.email, deputy.password, secrets)).access_token;
    assert.equal(
      (
        await call('POST', '/v1/orgs', deputyToken, {
          name: 'Nope',
          admin: { email: uniqueEmail('n'), name: 'N', password: newPassword() },
        })
      ).status,
      403,
    );
  });

  await t.test('POST - 409 when the admin email is taken (nothing is created), 400 for invalid input', async () => {
    const before = (await call('GET', '/v1/orgs', app.adminKey)).body.total;
    const dup = await call('POST', '/v1/orgs', app.adminKey, {
      name: 'Dup',
      admin: { email: acme.email, name: 'D', password: newPassword() },
    });
    assert.equal(dup.status, 409);
    assert.equal((await call('GET', '/v1/orgs', app.adminKey)).body.total, before, 'the organisation was rolled back');
    assert.equal((await call('POST', '/v1/orgs', app.adminKey, { name: 'NoAdmin' })).status, 400);
    assert.equal(
      (await call('POST', '/v1/orgs', app.adminKey, { name: '', admin: { email: uniqueEmail('e'), name: 'E', password: newPassword() } }))
        .status,
      400,
    );
  });

  await t.test('GET - the operator sees every organisation; others only their own', async () => {
    const all = await call('GET', '/v1/orgs', app.adminKey);
    const names = all.body.data.map((o: { name: string }) => o.name);
    for (const n of ['Default', 'Acme', 'Globex', 'Initech']) assert.ok(names.includes(n), n);
    assert.equal(all.body.total, all.body.data.length);
    const own = await call('GET', '/v1/orgs', acme.key);
    assert.deepEqual(
      own.body.data.map((o: { id: string }) => o.id),
      [acme.orgId],
    );
    assert.equal(own.body.total, 1);
    const member = await createUser(app, globex.key, 'member', secrets);
    const token = (await login(app, member.email, member.password, secrets)).access_token;
    assert.deepEqual(
      (await call('GET', '/v1/orgs', token)).body.data.map((o: { id: string }) => o.id),
      [globex.orgId],
    );
  });

  await t.test('logs - no key, token or password of this suite appears', () => {
    secrets.assertAbsentFrom(app.logs);
  });
});
