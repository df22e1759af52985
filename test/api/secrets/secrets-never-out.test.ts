import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { createKeyring } from '../../../src/crypto/index.js';
import { createRotationSources, rotateSecrets } from '../../../src/crypto/index.js';
import { AUTH_SECRET_ORG, AUTH_SECRET_PURPOSE, loadJwtSecret } from '../../../src/auth/jwt-secret.js';
import { startTestApp, TEST_SECRETS_KEY, type TestApp } from '../../helpers/app.js';
import type { RequestOptions } from '../../helpers/http.js';
import { openSse } from '../../helpers/sse-client.js';
import { addCaller, adminOrgId } from '../agents/helpers.js';
import { createSession, listAll, runTools, upload } from '../fs/helpers.js';
import { LOCAL_WEB_FETCH, LOCAL_WEB_FETCH_ENV } from '../../turns/slow-server.js';

/** Recognisable values: any of them anywhere the service answers or logs is a leak. */
const SECRET = 'sk-live-7c1e-never-comes-back-out';
const CONN_TOKEN = 'ghp_conn-4b2d-owner-only-token';
const FILE_SECRET = 'db-pass-91aa-kept-in-a-file';

/** Every response body the test saw, for the final grep. */
const bodies: string[] = [];

/** The app as one caller sees it, recording each response body. */
function as(app: TestApp, key: string): TestApp {
  return {
    ...app,
    adminKey: key,
    request: async (method: string, path: string, opts: RequestOptions = {}) => {
      const r = await app.request(method, path, { key, ...opts });
      bodies.push(r.text);
      return r;
    },
  };
}

/** A local server that records request headers and echoes them back in the body (a careless API). */
async function startEchoServer(t: { after(fn: () => unknown): void }) {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers);
    res.writeHead(200, { 'content-type': 'text/plain' }).end(`auth=${req.headers.authorization ?? ''} conn=${req.headers['x-conn'] ?? ''}`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const leaks = (text: string) => [SECRET, CONN_TOKEN, FILE_SECRET].filter((v) => text.includes(v));

test('secrets never come back out: by reference in fetch_url, redacted from results, connections only for their owner', async (t) => {
  const app = await startTestApp(t, { mode: 'postgres', env: LOCAL_WEB_FETCH_ENV });
  const echo = await startEchoServer(t);
  const org = await adminOrgId(app);
  const ownerCaller = await addCaller(app, { role: 'member', orgId: org });
  const memberCaller = await addCaller(app, { role: 'member', orgId: org });
  const owner = as(app, ownerCaller.key);
  const member = as(app, memberCaller.key);

  assert.equal((await owner.request('POST', '/v1/user/connections', { body: { provider: 'github', api_key: CONN_TOKEN } })).status, 201);
  const capabilities = ['session_storage', 'session_file_system', LOCAL_WEB_FETCH];
  const sessionId = await createSession(owner, capabilities, ownerCaller.key);
  assert.equal(
    (
      await owner.request('PUT', `/v1/sessions/${sessionId}/storage/secrets`, {
        // Bound to the echo server; the connection's secret too (a github connection goes only to GitHub's hosts by default).
        body: {
          secrets: {
            API_TOKEN: { value: SECRET, allowed_hosts: ['127.0.0.1'] },
            'connection:github': { value: CONN_TOKEN, allowed_hosts: ['127.0.0.1'] },
          },
        },
      })
    ).status,
    200,
  );
  assert.equal((await upload(owner, sessionId, '/notes/db.txt', `password: ${FILE_SECRET}\n`)).status, 201);
  await owner.request('PUT', `/v1/sessions/${sessionId}/storage/secrets`, { body: { secrets: { DB_PASSWORD: FILE_SECRET } } });
  const sse = await openSse(`${app.url}/v1/sessions/${sessionId}/sse`, { key: ownerCaller.key });
  t.after(() => sse.close());

  await t.test('the owner uses secrets by reference: the server gets the values, the transcript gets markers', async () => {
    const [get, list, fetched, fetchedConn, file] = await runTools(
      owner,
      sessionId,
      [
        ['secret_store', { operation: 'get', name: 'API_TOKEN' }],
        ['secret_store', { operation: 'list' }],
        ['fetch_url', { url: `${echo.url}/a`, headers: { Authorization: 'Bearer {{secret:API_TOKEN}}' } }],
        ['fetch_url', { url: `${echo.url}/b`, headers: { 'X-Conn': '{{secret:connection:github}}' } }],
        ['read_file', { path: '/notes/db.txt' }],
      ],
      { key: ownerCaller.key },
    );
    assert.equal(get!.result.found, true);
    assert.equal('value' in get!.result, false, 'get tells existence, never the value');
    assert.deepEqual(
      list!.result.secrets.map((s: { name: string }) => s.name),
      ['API_TOKEN', 'DB_PASSWORD', 'connection:github'],
    );
    assert.ok(
      echo.seen.some((h) => h.authorization === `Bearer ${SECRET}`),
      'the server received the real secret',
    );
    assert.ok(
      echo.seen.some((h) => h['x-conn'] === CONN_TOKEN),
      "the owner's turn may use the owner's connection",
    );
    assert.equal(fetched!.success, true, fetched!.error);
    assert.equal(fetchedConn!.success, true, fetchedConn!.error);
    assert.equal(file!.success, true, file!.error);
    const results = (await listAll(owner, sessionId, ownerCaller.key))
      .filter((e) => e.type === 'tool.completed')
      .map((e) => JSON.stringify(e.data.result))
      .join('\n');
    assert.match(results, /auth=Bearer \[secret:API_TOKEN\]/, 'an echoed secret is redacted in the tool result');
    assert.match(results, /conn=\[secret:connection:github\]/);
    assert.match(results, /password: \[secret:DB_PASSWORD\]/, 'a secret found in a file is redacted too');
  });

  await t.test("no one else can use or read the owner's connection: not an admin in the owner's session, not another member", async () => {
    const before = echo.seen.length;
    // Members reach only their own sessions; an admin may run a turn in the owner's session, but
    // that turn is the admin's and the owner's personal token reads as absent in it.
    assert.equal((await member.request('GET', `/v1/sessions/${sessionId}`)).status, 403);
    const [used, got] = await runTools(app, sessionId, [
      ['fetch_url', { url: `${echo.url}/c`, headers: { 'X-Conn': '{{secret:connection:github}}' } }],
      ['secret_store', { operation: 'get', name: 'connection:github' }],
    ]);
    assert.equal(used!.success, false);
    assert.match(used!.error!, /cannot use here/);
    assert.equal(echo.seen.length, before, 'nothing was sent');
    assert.equal('value' in got!.result, false);
    assert.deepEqual((await member.request('GET', '/v1/user/connections')).body.data, [], "the owner's connections are not the member's");
    assert.equal((await member.request('GET', '/v1/user/connections/github')).status, 404);
    const own = await createSession(member, capabilities, memberCaller.key);
    const [listed] = await runTools(member, own, [['secret_store', { operation: 'list' }]], { key: memberCaller.key });
    assert.deepEqual(listed!.result.secrets, [], "a member's own session gets no one else's connection");
  });

  await t.test('no value in any response, the SSE stream, the event log, the messages view or the logs', async () => {
    const events = await listAll(owner, sessionId, ownerCaller.key);
    assert.ok(events.some((e) => e.type === 'tool.completed'));
    await sse.waitFor((e) => e.event === 'session.idled', 2);
    const messages = await owner.request('GET', `/v1/sessions/${sessionId}/messages`);
    assert.equal(messages.status, 200);
    const streams = {
      responses: bodies.join('\n'),
      sse: JSON.stringify(sse.events),
      events: JSON.stringify(events),
      messages: messages.text,
      logs: app.logs.join(''),
    };
    for (const [where, text] of Object.entries(streams)) assert.deepEqual(leaks(text), [], `secret value found in ${where}`);
    assert.match(streams.messages, /\[secret:API_TOKEN\]/, 'the LLM saw (and summarised) the marker, not the value');
  });
});

test('the JWT signing key is stored sealed with the secrets keyring, a plain-text one is sealed on start, rotation covers it', async (t) => {
  const app = await startTestApp(t, { mode: 'postgres', env: LOCAL_WEB_FETCH_ENV });
  const { store, keyring } = app.app.services;
  const stored = async () => (await store.sql<{ value: string }>(`select value from auth_secrets where name = 'jwt_hs256'`))[0]!.value;
  const sealed = JSON.parse(await stored());
  assert.equal(sealed.v, 1, 'an envelope, not the key');
  const { key } = await loadJwtSecret({ store, keyring });
  assert.ok(!(await stored()).includes(Buffer.from(key).toString('base64url')));

  await t.test('a key stored in plain text before this change is sealed, and stays the same key', async () => {
    const legacy = Buffer.alloc(64, 9).toString('base64url');
    await store.sql(`update auth_secrets set value = ? where name = 'jwt_hs256'`, [legacy]);
    const loaded = await loadJwtSecret({ store, keyring });
    assert.equal(loaded.sealedNow, true);
    assert.equal(Buffer.from(loaded.key).toString('base64url'), legacy);
    assert.ok(!(await stored()).includes(legacy));
    assert.equal(Buffer.from((await loadJwtSecret({ store, keyring })).key).toString('base64url'), legacy);
  });

  await t.test('key rotation re-wraps it under the new key; the old key alone then cannot open it', async () => {
    const before = Buffer.from((await loadJwtSecret({ store, keyring })).key).toString('hex');
    const next = createKeyring({ current: 'next-kek:' + Buffer.alloc(32, 3).toString('base64'), previous: [TEST_SECRETS_KEY] });
    const reports = await rotateSecrets(next, createRotationSources(store));
    const auth = reports.find((r) => r.source === 'auth_secrets.value')!;
    assert.deepEqual([auth.scanned, auth.rewrapped, auth.failed.length], [1, 1, 0]);
    assert.equal(JSON.parse(await stored()).kid, 'next-kek');
    assert.equal(Buffer.from((await loadJwtSecret({ store, keyring: next })).key).toString('hex'), before);
    await assert.rejects(loadJwtSecret({ store, keyring }), /cannot be opened/);
    assert.equal([AUTH_SECRET_ORG, AUTH_SECRET_PURPOSE].join('/'), 'instance/auth_secret.value');
  });
});
