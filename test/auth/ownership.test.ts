import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addCaller, adminOrgId, agentBody, useSuiteApp } from '../api/agents/helpers.js';

/**
 * The ownership half of the member/admin matrix (src/auth/ownership.ts) through HTTP: members
 * change only the agents they created and reach only the sessions they created; admins manage
 * both for the whole organisation. The generated matrix (test/api/authorization-matrix.test.ts)
 * runs every route; these tests pin the cases it cannot build by itself.
 */
describe('member ownership (postgres)', () => {
  const app = useSuiteApp();

  it("agents: a member reads, copies and uses another member's agent, but cannot change, replace or archive it", async () => {
    const orgId = await adminOrgId(app());
    const [alice, bob] = [await addCaller(app(), { orgId }), await addCaller(app(), { orgId })];
    const created = await alice.request('POST', '/v1/agents', { body: agentBody({ name: 'Alice agent' }) });
    assert.equal(created.status, 201, created.text);
    const id = created.body.id;
    assert.equal((await bob.request('GET', `/v1/agents/${id}`)).status, 200);
    const copy = await bob.request('POST', `/v1/agents/${id}/copy`);
    assert.equal(copy.status, 201);
    assert.equal((await bob.request('PATCH', `/v1/agents/${copy.body.id}`, { body: { name: 'Bob copy' } })).status, 200, 'the copy is his');
    for (const [method, body] of [
      ['PATCH', { name: 'taken' }],
      ['PUT', agentBody({ name: 'taken' })],
      ['DELETE', undefined],
    ] as const) {
      const r = await bob.request(method, `/v1/agents/${id}`, body ? { body } : {});
      assert.deepEqual([r.status, r.body], [403, { error: 'Forbidden', status: 403 }], method);
    }
    const session = await bob.request('POST', '/v1/sessions', { body: { agent_id: id } });
    assert.equal(session.status, 201, 'members run sessions on any active agent of the organisation');
    const after = await alice.request('GET', `/v1/agents/${id}`);
    assert.deepEqual([after.body.name, after.body.status], ['Alice agent', 'active']);
    assert.equal((await alice.request('PATCH', `/v1/agents/${id}`, { body: { name: 'Alice v2' } })).status, 200);
    assert.equal(
      (await app().request('PATCH', `/v1/agents/${id}`, { body: { name: 'Admin edit' } })).status,
      200,
      'admins change any agent',
    );
    assert.equal((await alice.request('DELETE', `/v1/agents/${id}`)).status, 204);
  });

  it("agents from before creators were recorded (created_by null) count as the admins'", async () => {
    const orgId = await adminOrgId(app());
    const member = await addCaller(app(), { orgId });
    const mine = await member.request('POST', '/v1/agents', { body: agentBody({ name: 'old' }) });
    await app().app.services.store.sql('update agents set created_by = null where id = ?', [mine.body.id]);
    assert.equal((await member.request('PATCH', `/v1/agents/${mine.body.id}`, { body: { name: 'x' } })).status, 403);
    assert.equal((await app().request('PATCH', `/v1/agents/${mine.body.id}`, { body: { name: 'x' } })).status, 200);
  });

  it("sessions: a member neither lists nor reaches another user's session; admins reach every session", async () => {
    const orgId = await adminOrgId(app());
    const [alice, bob] = [await addCaller(app(), { orgId }), await addCaller(app(), { orgId })];
    const harness = (await alice.request('GET', '/v1/harnesses')).body.data[0].id;
    const s = await alice.request('POST', '/v1/sessions', { body: { harness_id: harness, title: 'alice' } });
    assert.equal(s.status, 201);
    const id = s.body.id;
    const listed = (who: typeof alice) =>
      who.request('GET', '/v1/sessions?limit=100').then((r) => r.body.data.map((x: { id: string }) => x.id));
    assert.ok((await listed(alice)).includes(id));
    assert.ok(!(await listed(bob)).includes(id), "another member's listing");
    const bobTotal = (await bob.request('GET', '/v1/sessions')).body.total;
    assert.equal(bobTotal, 0, 'the total counts only his own sessions');
    assert.ok(
      (await app().request('GET', '/v1/sessions?limit=100')).body.data.some((x: { id: string }) => x.id === id),
      "the admin's listing",
    );
    for (const [method, path, body] of [
      ['GET', '', undefined],
      ['PATCH', '', { title: 'taken' }],
      ['GET', '/events', undefined],
      ['GET', '/messages', undefined],
      ['POST', '/messages', { message: { content: [{ type: 'text', text: 'hi' }] } }],
      ['POST', '/cancel', undefined],
      ['POST', '/stream-token', undefined],
      ['DELETE', '', undefined],
    ] as const) {
      const r = await bob.request(method, `/v1/sessions/${id}${path}`, body ? { body } : {});
      assert.equal(r.status, 403, `${method} ${path}: ${r.text}`);
    }
    assert.equal((await alice.request('GET', `/v1/sessions/${id}`)).body.title, 'alice', 'unchanged');
    assert.equal((await app().request('GET', `/v1/sessions/${id}/events`)).status, 200, 'admins read every session');
    assert.equal((await app().request('PATCH', `/v1/sessions/${id}`, { body: { title: 'admin' } })).status, 200);
  });

  it("API keys: a member cannot revoke another user's key", async () => {
    const orgId = await adminOrgId(app());
    const [alice, bob] = [await addCaller(app(), { orgId }), await addCaller(app(), { orgId })];
    const key = await alice.request('POST', '/v1/auth/api-keys', { body: { name: 'spare' } });
    assert.equal((await bob.request('DELETE', `/v1/auth/api-keys/${key.body.id}`)).status, 403);
    assert.equal((await alice.request('DELETE', `/v1/auth/api-keys/${key.body.id}`)).status, 204);
  });
});
