import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addCaller, useSuiteApp } from '../agents/helpers.js';
import { createSession, runTools } from '../fs/helpers.js';

const KEY = 'ghp_connection_key_never_shown_1234';

describe('user connections', () => {
  const suiteApp = useSuiteApp();

  it('POST/GET/DELETE /v1/user/connections[/{provider}]: per user, key never returned', async () => {
    const app = suiteApp();
    const created = await app.request('POST', '/v1/user/connections/github', { body: { api_key: KEY } });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(Object.keys(created.body).sort(), ['created_at', 'provider', 'updated_at']);
    assert.equal((await app.request('POST', '/v1/user/connections/github', { body: { api_key: KEY + 'x' } })).status, 200);
    assert.equal((await app.request('POST', '/v1/user/connections', { body: { provider: 'gitlab', api_key: 'glpat-other' } })).status, 201);
    const list = await app.request('GET', '/v1/user/connections');
    assert.deepEqual(
      list.body.data.map((c: any) => c.provider),
      ['github', 'gitlab'],
    );
    assert.equal(list.body.total, 2);
    const one = await app.request('GET', '/v1/user/connections/github');
    assert.equal(one.body.provider, 'github');
    for (const r of [created, list, one]) assert.ok(!r.text.includes(KEY));

    const other = await addCaller(app);
    assert.deepEqual((await other.request('GET', '/v1/user/connections')).body.data, []);
    assert.equal((await other.request('GET', '/v1/user/connections/github')).status, 404);
    assert.equal((await other.request('DELETE', '/v1/user/connections/github')).status, 404);

    for (const body of [{}, { api_key: '' }, { api_key: 'k', extra: 1 }]) {
      assert.equal((await app.request('POST', '/v1/user/connections/github', { body })).status, 400);
    }
    assert.equal((await app.request('POST', '/v1/user/connections/Bad%20Name', { body: { api_key: 'k' } })).status, 400);
    assert.equal((await app.request('DELETE', '/v1/user/connections/gitlab')).status, 204);
    const gone = await app.request('DELETE', '/v1/user/connections/gitlab');
    assert.equal(gone.status, 404);
    assert.equal(gone.body.error, 'Not found: no connection for provider gitlab');
    await new Promise((r) => setTimeout(r, 100));
    assert.ok(!app.logs.join('').includes(KEY));
  });

  it('at session creation each connection becomes the session secret connection:<provider>', async () => {
    const app = suiteApp();
    const caller = await addCaller(app);
    assert.equal((await caller.request('POST', '/v1/user/connections/github', { body: { api_key: KEY } })).status, 201);
    const id = await createSession(app, ['session_storage'], caller.key);
    const secrets = await caller.request('GET', `/v1/sessions/${id}/storage/secrets`);
    assert.deepEqual(
      secrets.body.data.map((s: any) => s.name),
      ['connection:github'],
    );
    assert.ok(!secrets.text.includes(KEY));
    const session = await app.app.services.storage.access.owned({ org_id: caller.orgId }, id);
    assert.equal((await app.app.services.storage.forSession(session).secrets.get('connection:github'))?.value, KEY);
    // Another user's sessions do not get it.
    const other = await addCaller(app, { orgId: caller.orgId });
    const otherSession = await createSession(app, ['session_storage'], other.key);
    assert.deepEqual((await other.request('GET', `/v1/sessions/${otherSession}/storage/secrets`)).body.data, []);
    const [list] = await runTools(app, id, [['secret_store', { operation: 'list' }]], { key: caller.key });
    assert.deepEqual(
      list!.result.secrets.map((s: any) => s.name),
      ['connection:github'],
    );
    assert.ok(!app.logs.join('').includes(KEY));
  });
});
