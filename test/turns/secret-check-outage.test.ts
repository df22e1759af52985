import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { it } from 'node:test';
import { createSession, listAll } from '../api/fs/helpers.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/postgres.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';
import { LOCAL_WEB_FETCH, LOCAL_WEB_FETCH_ENV } from './slow-server.js';

const SECRET = 'sk-outage-5e2a-must-stay-hidden';
/** Long enough that the redaction check starts while PostgreSQL is still unreachable. */
const OUTAGE_MS = 4_000;

/** The session's `tool.completed` data once the turn is idle, polling through the API's 503s while the database reconnects. */
async function waitForToolCompleted(app: TestApp, sessionId: string) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const r = await app.request('GET', `/v1/sessions/${sessionId}/events?limit=1000`);
    if (r.status === 200) {
      const events = r.body.data as { type: string; data: Record<string, unknown> }[];
      const done = events.find((e) => e.type === 'tool.completed');
      if (done && events.some((e) => e.type === 'session.idled')) return done.data;
    }
    assert.ok(Date.now() < deadline, `no tool.completed and session.idled in time (last ${r.status} ${r.text.slice(0, 200)})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Chaos defect 3 (issue 13): a `fetch_url` that succeeded while PostgreSQL was down for a few
 * seconds was recorded as failed ("Tool result withheld") because its secret check could not
 * read the session's secrets. The check now waits out a short outage.
 */
it('a tool that completes during a short PostgreSQL outage is recorded as succeeded, its echoed secret redacted', async (t) => {
  const db = await createTestDatabase('secretcheck');
  t.after(() => db.drop());
  const real = new URL(db.url);
  const proxy = await startTcpProxy({ host: real.hostname, port: Number(real.port || 5432) });
  t.after(() => proxy.close());
  const viaProxy = new URL(db.url);
  viaProxy.port = String(proxy.port);

  // The tool's server cuts the database while answering, so the call completes inside the outage.
  let restored: Promise<void> | undefined;
  const echo = createServer((req, res) => {
    void proxy.cut().then(() => {
      restored = new Promise((resolve) => setTimeout(resolve, OUTAGE_MS)).then(() => proxy.restore());
      res.writeHead(200, { 'content-type': 'text/plain' }).end(`auth=${req.headers.authorization ?? ''}`);
    });
  });
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    echo.closeAllConnections();
    echo.close();
  });
  const echoUrl = `http://127.0.0.1:${(echo.address() as AddressInfo).port}`;

  const app = await startTestApp(t, { mode: 'nats', databaseUrl: viaProxy.toString(), env: LOCAL_WEB_FETCH_ENV });
  const sessionId = await createSession(app, ['session_storage', LOCAL_WEB_FETCH]);
  const put = await app.request('PUT', `/v1/sessions/${sessionId}/storage/secrets`, {
    body: { secrets: { API_TOKEN: { value: SECRET, allowed_hosts: ['127.0.0.1'] } } },
  });
  assert.equal(put.status, 200, put.text);

  const call = { url: `${echoUrl}/x`, headers: { Authorization: 'Bearer {{secret:API_TOKEN}}' } };
  const text = `@tool fetch_url ${JSON.stringify(call)}`;
  const sent = await app.request('POST', `/v1/sessions/${sessionId}/messages`, {
    body: { message: { content: [{ type: 'text', text }] } },
  });
  assert.equal(sent.status, 201, sent.text);
  // The API needs the database too: look only once the outage is over.
  while (!restored) await new Promise((r) => setTimeout(r, 20));
  await restored;
  const completed = await waitForToolCompleted(app, sessionId);
  assert.equal(completed['success'], true, `recorded as failed: ${completed['error']}`);
  assert.match(
    JSON.stringify(completed['result']),
    /auth=Bearer \[secret:API_TOKEN\]/,
    'the echoed secret is redacted in the recorded result',
  );
  const events = await listAll(app, sessionId);
  assert.equal(JSON.stringify(events).includes(SECRET), false, 'the value is nowhere in the event log');
  assert.equal(app.logs.join('').includes(SECRET), false, 'nor in the logs');
});
