import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { request, startTestApp, type TestApp } from '../helpers/app.js';
import { createKey, createOrgWithAdmin, createUser, login } from '../api/auth/helpers.js';
import { createSession, getSession, sendMessage, watch } from './helpers.js';

/**
 * PATCH /v1/sessions/{id} with `tool_approvals` (decision 0101): a live session's own rules are
 * replaced, checked as at create (400 and nothing changed for bad rules), by whoever may reach
 * the session (its owner and the organisation's admins, decision 0018), and the session's next
 * turn obeys them, in both modes.
 */
const ASK_TIME = [{ tool: 'get_current_*', policy: 'always_ask' }];

function patch(app: TestApp, id: string, body: unknown, key = app.adminKey) {
  return request(app.url, 'PATCH', `/v1/sessions/${id}`, { key, body });
}

for (const mode of ['postgres', 'nats'] as const) {
  describe(`sessions: PATCH tool_approvals (${mode})`, () => {
    it('rules PATCHed after a turn make the next one ask; removing them lets the next turn run freely', async (t) => {
      const app = await startTestApp(t, { mode });
      const { id } = await createSession(app, { capabilities: ['current_time'] });
      const sse = await watch(app, id);
      t.after(() => sse.close());
      assert.equal((await sendMessage(app, id, '@tool get_current_time {}')).status, 201);
      const first = await sse.until('session.idled');
      assert.equal(first.filter((e) => e.type === 'tool.approval_requested').length, 0, 'no rule yet: the call ran');
      assert.equal(first.find((e) => e.type === 'tool.completed')!.data['success'], true);
      const r = await patch(app, id, { tool_approvals: ASK_TIME });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.body.tool_approvals, ASK_TIME);

      assert.equal((await sendMessage(app, id, '@tool get_current_time {}')).status, 201);
      const asked = (await sse.until('tool.approval_requested')).find((e) => e.type === 'tool.approval_requested')!;
      assert.equal(asked.data['tool_calls'][0].name, 'get_current_time');
      await until(async () => (await getSession(app, id)).status === 'waiting_for_tool_results');
      assert.equal((await app.request('POST', `/v1/sessions/${id}/cancel`)).status, 200);
      await sse.until('session.idled', 2);

      // `[]` removes the session's rules: the next turn runs its call without asking.
      const cleared = await patch(app, id, { tool_approvals: [] });
      assert.equal(cleared.status, 200, cleared.text);
      assert.equal(cleared.body.tool_approvals, undefined);
      assert.equal((await getSession(app, id)).tool_approvals, undefined);
      assert.equal((await sendMessage(app, id, '@tool get_current_time {}')).status, 201);
      const done = await sse.until('session.idled', 3);
      const second = done.slice(done.map((e) => e.type).lastIndexOf('turn.started'));
      assert.equal(second.filter((e) => e.type === 'tool.approval_requested').length, 0);
      assert.equal(second.find((e) => e.type === 'tool.completed')!.data['success'], true);
    });
  });
}

describe('sessions: PATCH tool_approvals, checks and permissions', () => {
  it('bad rules are 400 and change nothing; a rule set is read back; other fields stay', async (t) => {
    const app = await startTestApp(t);
    const { id } = await createSession(app, { capabilities: ['current_time'] }, { title: 'kept', tool_approvals: ASK_TIME });
    assert.deepEqual((await getSession(app, id)).tool_approvals, ASK_TIME, 'the rules given at create are shown');
    const bad: unknown[] = [
      [{ tool: 'x', policy: 'sometimes' }],
      [{ tool: '', policy: 'deny' }],
      [{ tool: 'x'.repeat(129), policy: 'deny' }],
      [{ tool: 'x', policy: 'deny', extra: 1 }],
      Array.from({ length: 65 }, (_, i) => ({ tool: `t${i}`, policy: 'deny' })),
      'deny',
      null,
    ];
    for (const rules of bad) {
      const r = await patch(app, id, { tool_approvals: rules, title: 'changed' });
      assert.equal(r.status, 400, `${JSON.stringify(rules).slice(0, 80)}: ${r.text}`);
      assert.deepEqual(Object.keys(r.body).sort(), ['error', 'status']);
    }
    const after = await getSession(app, id);
    assert.deepEqual(after.tool_approvals, ASK_TIME, 'nothing changed');
    assert.equal(after.title, 'kept');

    const rules = [
      { tool: 'get_current_time', policy: 'deny' },
      { tool: '*', policy: 'always_allow' },
    ];
    const r = await patch(app, id, { tool_approvals: rules });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body.tool_approvals, rules);
    assert.equal(r.body.title, 'kept');
    assert.deepEqual((await getSession(app, id)).tool_approvals, rules);
    const listed = await app.request('GET', '/v1/sessions?limit=100');
    assert.equal(listed.body.data.find((s: { id: string }) => s.id === id).tool_approvals, undefined, 'not in lists');

    // The next turn follows the new rules (the session's deny wins over nothing).
    const sse = await watch(app, id);
    t.after(() => sse.close());
    assert.equal((await sendMessage(app, id, '@tool get_current_time {}')).status, 201);
    const done = await sse.until('session.idled');
    assert.match(done.find((e) => e.type === 'tool.completed')!.data['error'], /denied by the tool approval policy/);
  });

  it("a member changes their own session's rules, not another's; an admin changes any; another organisation cannot", async (t) => {
    const app = await startTestApp(t);
    const member = await createUser(app, app.adminKey, 'member');
    const memberKey = (await createKey(app, (await login(app, member.email, member.password)).access_token)).key;
    const { id: adminSession, agentId } = await createSession(app, { capabilities: ['current_time'] });
    const own = await request(app.url, 'POST', '/v1/sessions', { key: memberKey, body: { agent_id: agentId } });
    assert.equal(own.status, 201, own.text);
    const memberSession: string = own.body.id;

    assert.equal((await patch(app, memberSession, { tool_approvals: ASK_TIME }, memberKey)).status, 200);
    const foreign = await patch(app, adminSession, { tool_approvals: [{ tool: '*', policy: 'always_allow' }] }, memberKey);
    assert.equal(foreign.status, 403, foreign.text);
    assert.equal((await getSession(app, adminSession)).tool_approvals, undefined, "the admin's session is unchanged");
    const byAdmin = await patch(app, memberSession, { tool_approvals: [{ tool: '*', policy: 'deny' }] });
    assert.equal(byAdmin.status, 200, byAdmin.text);
    assert.deepEqual(byAdmin.body.tool_approvals, [{ tool: '*', policy: 'deny' }]);

    const other = await createOrgWithAdmin(app, 'Other org');
    const stranger = await patch(app, memberSession, { tool_approvals: [] }, other.key);
    assert.ok([403, 404].includes(stranger.status), stranger.text);
    assert.deepEqual((await getSession(app, memberSession)).tool_approvals, [{ tool: '*', policy: 'deny' }]);
  });
});

async function until(check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
