import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { startTestApp } from '../helpers/app.js';
import { request } from '../helpers/http.js';
import { createOrgWithAdmin, createUser, login } from '../api/auth/helpers.js';

/** Issue 30 item 8: an `Idempotency-Key` is the caller's own; another user's key replays nothing. */
const post = (url: string, credential: string, path: string, body: unknown, key: string) =>
  request(url, 'POST', path, { key: credential, body, headers: { 'Idempotency-Key': key } });

test('Idempotency-Key is scoped to the user: a member replaying an admin key is refused, and one key serves two users apart', async (t) => {
  const app = await startTestApp(t, { mode: 'postgres' });
  const admin = await createOrgWithAdmin(app, `IdemP${randomUUID().slice(0, 6)}`);
  const member = await createUser(app, admin.key, 'member');
  const memberToken = (await login(app, member.email, member.password)).access_token;

  const agent = await request(app.url, 'POST', '/v1/agents', { key: admin.key, body: { name: 'idem-p', system_prompt: 'Echo.' } });
  assert.equal(agent.status, 201, agent.text);
  const session = await request(app.url, 'POST', '/v1/sessions', { key: admin.key, body: { agent_id: agent.body.id } });
  assert.equal(session.status, 201, session.text);
  const path = `/v1/sessions/${session.body.id}/messages`;
  const msg = { message: { content: [{ type: 'text', text: 'admin only' }] } };
  const key = randomUUID();
  const first = await post(app.url, admin.key, path, msg, key);
  assert.equal(first.status, 201, first.text);

  // The member sends the very same request with the admin's key: the session's access check answers.
  const stolen = await post(app.url, memberToken, path, msg, key);
  assert.ok(stolen.status === 403 || stolen.status === 404, `${stolen.status} ${stolen.text}`);
  assert.equal(stolen.headers.get('idempotent-replayed'), null);
  assert.notDeepEqual(stolen.body, first.body);
  // The admin's turn writes its input.message when its worker begins it (the job carries it).
  const eventsUrl = `/v1/sessions/${session.body.id}/events?limit=1000`;
  let events = await request(app.url, 'GET', eventsUrl, { key: admin.key });
  const began = () => (events.body.data as { type: string }[]).some((e) => e.type === 'turn.started');
  for (const until = Date.now() + 10_000; !began() && Date.now() < until; ) {
    await new Promise((r) => setTimeout(r, 20));
    events = await request(app.url, 'GET', eventsUrl, { key: admin.key });
  }
  const inputs = (events.body.data as { type: string }[]).filter((e) => e.type === 'input.message');
  assert.equal(inputs.length, 1, 'the member stored nothing');

  // The admin's retry still gets the first outcome.
  const retry = await post(app.url, admin.key, path, msg, key);
  assert.deepEqual([retry.status, retry.headers.get('idempotent-replayed'), retry.body], [201, 'true', first.body]);

  // Two users, one key, the same request on their own behalf: two agents.
  const shared = randomUUID();
  const body = { name: `idem-shared-${shared.slice(0, 8)}`, system_prompt: 'Same.' };
  const a = await post(app.url, admin.key, '/v1/agents', body, shared);
  const m = await post(app.url, memberToken, '/v1/agents', body, shared);
  assert.equal(a.status, 201, a.text);
  assert.equal(m.status, 201, m.text);
  assert.notEqual(m.body.id, a.body.id);
  assert.equal(m.headers.get('idempotent-replayed'), null);
  const list = await request(app.url, 'GET', '/v1/agents?limit=100', { key: admin.key });
  assert.equal((list.body.data as { name: string }[]).filter((x) => x.name === body.name).length, 2);
});
