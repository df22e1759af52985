import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { startTestApp } from '../../helpers/app.js';
import { createSession, listAll, runTools } from '../fs/helpers.js';
import { LOCAL_WEB_FETCH, LOCAL_WEB_FETCH_ENV } from '../../turns/slow-server.js';

const SECRET = 'sk-live-4f9Qz81XyW-bound';

/** The ways a careless server echoes a credential back: each must be redacted before it is stored. */
function transformedEchoes(value: string): Record<string, string> {
  const bytes = Buffer.from(value);
  return {
    plain: value,
    base64: bytes.toString('base64'),
    base64url: bytes.toString('base64url'),
    basicAuth: Buffer.from(`user:${value}`).toString('base64'),
    hex: bytes.toString('hex'),
    hexUpper: bytes.toString('hex').toUpperCase(),
    reversed: [...value].reverse().join(''),
    upper: value.toUpperCase(),
    spaced: [...value].join(' '),
    urlEncoded: encodeURIComponent(`${value}/&`),
  };
}

/** Records request headers; answers with the Authorization value in every transformed form. */
async function startEchoServer(t: { after(fn: () => unknown): void }) {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers);
    const auth = (req.headers.authorization ?? '').replace(/^Bearer /, '');
    const lines = Object.entries(transformedEchoes(auth)).map(([k, v]) => `${k}=${v}`);
    res.writeHead(200, { 'content-type': 'text/plain' }).end(lines.join('\n'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  const port = (server.address() as AddressInfo).port;
  return { url: `http://127.0.0.1:${port}`, port, seen };
}

test('a session secret goes only to the hosts it allows, and its encodings are redacted from what comes back', async (t) => {
  const app = await startTestApp(t, { mode: 'postgres', env: LOCAL_WEB_FETCH_ENV });
  const echo = await startEchoServer(t);
  const sessionId = await createSession(app, ['session_storage', LOCAL_WEB_FETCH]);
  const put = (secrets: Record<string, unknown>) => app.request('PUT', `/v1/sessions/${sessionId}/storage/secrets`, { body: { secrets } });

  await t.test('allowed_hosts is set on create, kept by a plain update, listed, and validated', async () => {
    const r = await put({
      BOUND: { value: SECRET, allowed_hosts: ['127.0.0.1', '*.Example.org'] },
      UNBOUND: 'sk-unbound-value-1234',
      ELSEWHERE: { value: 'sk-elsewhere-value-5678', allowed_hosts: ['api.example.com'] },
    });
    assert.equal(r.status, 200, r.text);
    const hosts = Object.fromEntries(r.body.data.map((s: { name: string; allowed_hosts: string[] }) => [s.name, s.allowed_hosts]));
    assert.deepEqual(hosts, { BOUND: ['127.0.0.1', '*.example.org'], ELSEWHERE: ['api.example.com'], UNBOUND: [] });
    assert.equal((await put({ BOUND: SECRET })).status, 200, 'a plain value replaces the value only');
    const listed = await app.request('GET', `/v1/sessions/${sessionId}/storage/secrets`);
    assert.deepEqual(listed.body.data.find((s: { name: string }) => s.name === 'BOUND').allowed_hosts, ['127.0.0.1', '*.example.org']);
    for (const bad of [['http://x.com'], ['*'], ['a..b'], ['*.'], ['exa mple.com'], Array.from({ length: 33 }, (_, i) => `h${i}.com`)]) {
      const refused = await put({ BOUND: { value: SECRET, allowed_hosts: bad } });
      assert.equal(refused.status, 400, `${JSON.stringify(bad)}: ${refused.text}`);
    }
  });

  await t.test('fetch_url sends a secret only to an allowed host; elsewhere the call fails without the value', async () => {
    const [sent, unbound, elsewhere, byName] = await runTools(app, sessionId, [
      ['fetch_url', { url: `${echo.url}/ok`, headers: { Authorization: 'Bearer {{secret:BOUND}}' } }],
      ['fetch_url', { url: `${echo.url}/no`, headers: { Authorization: 'Bearer {{secret:UNBOUND}}' } }],
      ['fetch_url', { url: `${echo.url}/no`, headers: { Authorization: 'Bearer {{secret:ELSEWHERE}}' } }],
      // The binding is by the URL's host: localhost is not 127.0.0.1, even though it resolves there.
      ['fetch_url', { url: `http://localhost:${echo.port}/no`, headers: { Authorization: 'Bearer {{secret:BOUND}}' } }],
    ]);
    assert.equal(sent!.success, true, sent!.error);
    assert.equal(echo.seen.length, 1, 'only the allowed request reached the server');
    assert.equal(echo.seen[0]!.authorization, `Bearer ${SECRET}`);
    assert.equal(unbound!.success, false);
    assert.match(unbound!.error!, /secret "UNBOUND" cannot be sent to 127\.0\.0\.1: it has no allowed hosts yet/);
    assert.match(elsewhere!.error!, /secret "ELSEWHERE" cannot be sent to 127\.0\.0\.1: it may be sent only to "api\.example\.com"/);
    assert.match(byName!.error!, /cannot be sent to localhost/);
    for (const e of [unbound, elsewhere, byName]) assert.ok(!/sk-/.test(e!.error!), 'no value in the error');
  });

  await t.test('the server echoed the secret in 10 encodings: none reaches the event log', async () => {
    const events = JSON.stringify(await listAll(app, sessionId));
    const result = (await listAll(app, sessionId)).find((e) => e.type === 'tool.completed' && e.data.success)!;
    const text = result.data.result.map((p: { text?: string }) => p.text ?? '').join('\n');
    for (const [form, echoed] of Object.entries(transformedEchoes(SECRET))) {
      assert.ok(!events.includes(echoed) && !events.includes(JSON.stringify(echoed).slice(1, -1)), `the ${form} echo reached the log`);
      assert.match(text, new RegExp(`${form}=\\S*\\[secret:BOUND\\]`), `the ${form} echo carries the marker`);
    }
  });
});
