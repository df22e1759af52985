import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { request, startTestApp, type TestApp, type TestMode } from '../../helpers/app.js';
import { createOrgWithAdmin } from '../auth/helpers.js';

/** Issue 30 item 6: operator caps per organisation, whatever its members do. */

async function orgWithAgent(app: TestApp) {
  const admin = await createOrgWithAdmin(app, `Cap${randomBytes(3).toString('hex')}`);
  const call = (method: string, path: string, opts: { body?: unknown; raw?: Uint8Array; headers?: Record<string, string> } = {}) =>
    request(app.url, method, path, { key: admin.key, ...opts });
  const agent = await call('POST', '/v1/agents', {
    body: { name: 'capped', system_prompt: 'Echo.', capabilities: ['session_file_system'] },
  });
  assert.equal(agent.status, 201, agent.text);
  const newSession = async () => {
    const r = await call('POST', '/v1/sessions', { body: { agent_id: agent.body.id } });
    assert.equal(r.status, 201, r.text);
    return r.body.id as string;
  };
  return { admin, call, agentId: agent.body.id as string, newSession };
}

function assertOrgLimit(r: { status: number; body: any; text: string }, what: RegExp) {
  assert.equal(r.status, 429, r.text);
  assert.equal(r.body.status, 429);
  assert.match(r.body.error, /^Organisation limit reached/);
  assert.match(r.body.error, what);
}

test('ORG_MAX_AGENTS: parallel creates stop exactly at the cap with 429, on every create path; other organisations are unaffected', async (t) => {
  const app = await startTestApp(t, { env: { ORG_MAX_AGENTS: 4 } });
  const org = await orgWithAgent(app); // one agent already
  const burst = await Promise.all(
    Array.from({ length: 12 }, (_, i) => org.call('POST', '/v1/agents', { body: { name: `a${i}`, system_prompt: 'x' } })),
  );
  assert.equal(burst.filter((r) => r.status === 201).length, 3, burst.map((r) => r.status).join(','));
  for (const r of burst.filter((r) => r.status !== 201)) assertOrgLimit(r, /at most 4 agents, archived ones included/);
  const list = await org.call('GET', '/v1/agents?include_archived=true&limit=100');
  assert.equal(list.body.data.length, 4);
  assertOrgLimit(await org.call('POST', `/v1/agents/${org.agentId}/copy`), /4 agents/);
  assertOrgLimit(
    await org.call('PUT', '/v1/agents/0190f5a2-7c1e-7aaa-8bbb-0123456789ab', { body: { name: 'put', system_prompt: 'x' } }),
    /4 agents/,
  );
  // Archiving frees nothing: the row stays.
  assert.equal((await org.call('DELETE', `/v1/agents/${org.agentId}`)).status, 204);
  assertOrgLimit(await org.call('POST', '/v1/agents', { body: { name: 'again', system_prompt: 'x' } }), /4 agents/);
  assert.equal((await org.call('GET', '/v1/agents?include_archived=true&limit=100')).body.data.length, 4);
  // The cap is the organisation's: another one creates freely.
  const other = await orgWithAgent(app);
  assert.equal((await other.call('POST', '/v1/agents', { body: { name: 'b', system_prompt: 'x' } })).status, 201);
});

for (const mode of ['pglite', 'postgres'] as TestMode[]) {
  test(`ORG_MAX_SESSIONS (${mode}): parallel creates stop exactly at the cap with 429; deleting a session frees its place`, async (t) => {
    const app = await startTestApp(t, { mode, env: { ORG_MAX_SESSIONS: 5 } });
    const org = await orgWithAgent(app);
    const burst = await Promise.all(
      Array.from({ length: 15 }, () => org.call('POST', '/v1/sessions', { body: { agent_id: org.agentId } })),
    );
    const created = burst.filter((r) => r.status === 201);
    assert.equal(created.length, 5, burst.map((r) => r.status).join(','));
    for (const r of burst.filter((r) => r.status !== 201)) assertOrgLimit(r, /at most 5 sessions/);
    assert.equal((await org.call('GET', '/v1/sessions?limit=100')).body.data.length, 5);
    assert.equal((await org.call('DELETE', `/v1/sessions/${created[0]!.body.id}`)).status, 204);
    assert.equal((await org.call('POST', '/v1/sessions', { body: { agent_id: org.agentId } })).status, 201);
    assertOrgLimit(await org.call('POST', '/v1/sessions', { body: { agent_id: org.agentId } }), /5 sessions/);
    // The cap reads a count the database keeps (migration 0029): it matches the rows after creates, refusals and deletes.
    const sql = app.app.services.store.sql.bind(app.app.services.store);
    const orgId = (await org.call('GET', `/v1/sessions/${created[1]!.body.id}`)).body.organization_id as string;
    const [kept] = await sql<{ n: unknown }>(`select n from org_row_counts where organization_id = ? and counted = 'sessions'`, [orgId]);
    const [rows] = await sql<{ n: unknown }>('select count(*) as n from sessions where organization_id = ?', [orgId]);
    assert.equal(Number(kept?.n), 5);
    assert.equal(Number(rows?.n), 5);
  });
}

test("ORG_MAX_STORAGE_BYTES: the sum of all the organisation's sessions' files, kv and SQL is capped; 413 changes nothing", async (t) => {
  const app = await startTestApp(t, { env: { ORG_MAX_STORAGE_BYTES: 10_000 } });
  const org = await orgWithAgent(app);
  const [s1, s2, s3] = [await org.newSession(), await org.newSession(), await org.newSession()];
  const put = (session: string, path: string, size: number) =>
    org.call('POST', `/v1/sessions/${session}/fs/${path}`, {
      raw: randomBytes(size),
      headers: { 'content-type': 'application/octet-stream' },
    });
  assert.equal((await put(s1, 'a.bin', 6_000)).status, 201);
  // Each session is far below its own quota; together they would pass the organisation's.
  const refused = await put(s2, 'b.bin', 5_000);
  assert.equal(refused.status, 413, refused.text);
  assert.deepEqual(refused.body, {
    error: 'Organisation storage limit reached: 6000 of 10000 bytes used by its sessions, 5000 more requested',
    status: 413,
  });
  assert.equal((await org.call('GET', `/v1/sessions/${s2}/fs/b.bin`)).status, 404, 'nothing was written');

  // Parallel writes in different sessions cannot pass the cap together (the organisation's lock).
  const burst = await Promise.all([s2, s3, s2, s3].map((s, i) => put(s, `p${i}.bin`, 1_500)));
  assert.deepEqual(burst.map((r) => r.status).sort(), [201, 201, 413, 413]);
  // Shrinking a file always works, and frees room.
  assert.equal((await put(s1, 'a.bin', 1_000)).status, 200);
  assert.equal((await put(s2, 'b.bin', 5_000)).status, 201);

  // The tools' stores count too: key/value entries and SQL databases (used 9000 now).
  const session = { id: s3, organization_id: org.admin.orgId };
  const storage = app.app.services.storage.forSession(session);
  await assert.rejects(storage.kv.set('big', 'v'.repeat(2_000)), { status: 413, message: /Organisation storage limit reached/ });
  assert.equal(await storage.kv.get('big'), null);
  await storage.kv.set('small', 'v'.repeat(500));
  await assert.rejects(storage.sql.open('db', { create: true }), { status: 413, message: /Organisation storage limit reached/ });
  assert.deepEqual(await storage.sql.list(), []);
});

for (const mode of ['postgres', 'nats'] as TestMode[]) {
  test(`ORG_MAX_TURNS_IN_FLIGHT (${mode}): a message past the cap gets 429 with Retry-After and stores nothing; it passes once a turn ends`, async (t) => {
    const app = await startTestApp(t, { mode, env: { ORG_MAX_TURNS_IN_FLIGHT: 1 } });
    const org = await orgWithAgent(app);
    const [s1, s2] = [await org.newSession(), await org.newSession()];
    const say = (session: string, text: string) =>
      org.call('POST', `/v1/sessions/${session}/messages`, { body: { message: { content: [{ type: 'text', text }] } } });
    assert.equal((await say(s1, 'slow\n@sleep 1500')).status, 201);
    const refused = await say(s2, 'hello');
    assert.equal(refused.status, 429, refused.text);
    assert.equal(refused.headers.get('retry-after'), '5');
    assert.match(refused.body.error, /^Organisation limit reached: at most 1 turns may run at once/);
    const events = await org.call('GET', `/v1/sessions/${s2}/events?limit=100`);
    assert.deepEqual(
      (events.body.data as { type: string }[]).map((e) => e.type),
      ['session.created'],
    );
    const session = await org.call('GET', `/v1/sessions/${s2}`);
    assert.equal(session.body.status, 'started');
    // Once the first turn is over the second organisation-wide turn may start.
    const deadline = Date.now() + 30_000;
    let accepted = await say(s2, 'hello');
    while (accepted.status === 429 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      accepted = await say(s2, 'hello');
    }
    assert.equal(accepted.status, 201, accepted.text);
  });
}
