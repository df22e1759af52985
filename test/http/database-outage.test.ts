import assert from 'node:assert/strict';
import { it } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/postgres.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';

/** Requests that all need the database, one of each kind. */
async function burst(app: TestApp, sessionId: string, agentId: string) {
  return Promise.all([
    app.request('GET', '/v1/sessions'),
    app.request('GET', `/v1/sessions/${sessionId}`),
    app.request('POST', '/v1/sessions', { body: { agent_id: agentId } }),
    app.request('GET', `/v1/agents/${agentId}`),
    app.request('POST', `/v1/sessions/${sessionId}/messages`, { body: { message: { content: [{ type: 'text', text: 'hi' }] } } }),
  ]);
}

/**
 * Issue 13 item 4: while PostgreSQL was down the API answered 500s. A client may retry a 503
 * with Retry-After; a 500 tells it the request is broken.
 */
it('a PostgreSQL outage: the API answers 503 with Retry-After (never 500), and serves again once it is back', async (t) => {
  const db = await createTestDatabase('outage');
  t.after(() => db.drop());
  const real = new URL(db.url);
  const proxy = await startTcpProxy({ host: real.hostname, port: Number(real.port || 5432) });
  t.after(() => proxy.close());
  const viaProxy = new URL(db.url);
  viaProxy.port = String(proxy.port);
  const app = await startTestApp(t, { mode: 'postgres', databaseUrl: viaProxy.toString() });

  const agent = await app.request('POST', '/v1/agents', { body: { name: 'outage', system_prompt: 'You help.' } });
  assert.equal(agent.status, 201, agent.text);
  const session = await app.request('POST', '/v1/sessions', { body: { agent_id: agent.body.id } });
  assert.equal(session.status, 201, session.text);

  await proxy.cut();
  const statuses: number[] = [];
  for (let round = 0; round < 3; round++) {
    for (const r of await burst(app, session.body.id, agent.body.id)) {
      statuses.push(r.status);
      assert.equal(r.status, 503, `during the outage: ${r.status} ${r.text}`);
      assert.ok(Number(r.headers.get('retry-after')) >= 1, 'Retry-After says when to come back');
    }
  }

  await proxy.restore();
  let back = await app.request('GET', `/v1/sessions/${session.body.id}`);
  for (let i = 0; i < 50 && back.status !== 200; i++) {
    await new Promise((r) => setTimeout(r, 100));
    back = await app.request('GET', `/v1/sessions/${session.body.id}`);
  }
  assert.equal(back.status, 200, back.text);
  assert.equal((await app.request('GET', '/v1/sessions')).status, 200);
});
