import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { parseCorsOrigins } from '../../src/http/cors.js';
import { loadConfig } from '../../src/config.js';

const ALLOWED = 'https://console.example';
const OTHER = 'https://evil.example';

const methodsOf = (h: Headers, name: string) =>
  new Set(
    (h.get(name) ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  );

async function preflight(app: TestApp, path: string, origin: string, method = 'GET') {
  return fetch(app.url + path, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'authorization, last-event-id' },
  });
}

async function newSession(app: TestApp): Promise<{ agentId: string; sessionId: string }> {
  const agent = await app.request('POST', '/v1/agents', { body: { name: 'a', system_prompt: 'p' } });
  const session = await app.request('POST', '/v1/sessions', { body: { agent_id: agent.body.id } });
  return { agentId: agent.body.id, sessionId: session.body.id };
}

function assertNoCors(h: Headers): void {
  for (const [k] of h) assert.ok(!k.startsWith('access-control-'), `unexpected ${k}`);
}

describe('CORS (CORS_ALLOWED_ORIGINS)', () => {
  it('answers preflights from a listed origin with the methods each path has', async (t) => {
    const app = await startTestApp(t, { mode: 'pglite', env: { CORS_ALLOWED_ORIGINS: `http://localhost:5173, ${ALLOWED}` } });
    const { agentId, sessionId } = await newSession(app);
    const cases: [string, string[]][] = [
      ['/v1/agents', ['GET', 'POST']],
      [`/v1/agents/${agentId}`, ['GET', 'PUT', 'PATCH', 'DELETE']],
      [`/v1/sessions/${sessionId}/sse`, ['GET']],
      [`/v1/sessions/${sessionId}/events`, ['GET']],
    ];
    for (const [path, methods] of cases) {
      const res = await preflight(app, path, ALLOWED);
      assert.equal(res.status, 204, path);
      assert.equal(res.headers.get('access-control-allow-origin'), ALLOWED, path);
      assert.equal(res.headers.get('vary'), 'Origin', path);
      assert.deepEqual(methodsOf(res.headers, 'access-control-allow-methods'), new Set(methods), path);
      assert.deepEqual(methodsOf(res.headers, 'allow'), new Set([...methods, 'OPTIONS']), path);
      const allowHeaders = methodsOf(res.headers, 'access-control-allow-headers');
      for (const h of ['Authorization', 'Content-Type', 'Last-Event-ID', 'Idempotency-Key', 'Mcp-Protocol-Version', 'Mcp-Session-Id'])
        assert.ok(allowHeaders.has(h), `${path}: ${h}`);
      assert.ok(Number(res.headers.get('access-control-max-age')) > 0, path);
      assert.equal(res.headers.get('access-control-allow-credentials'), null, path);
    }
    // The second listed origin works too; an unknown path is still 404.
    assert.equal(
      (await preflight(app, '/v1/agents', 'http://localhost:5173')).headers.get('access-control-allow-origin'),
      'http://localhost:5173',
    );
    assert.equal((await preflight(app, '/v1/nowhere', ALLOWED)).status, 404);
    // A plain OPTIONS (no preflight) learns the methods and nothing about CORS beyond the origin.
    const plain = await fetch(`${app.url}/v1/agents`, { method: 'OPTIONS' });
    assert.equal(plain.status, 204);
    assert.deepEqual(methodsOf(plain.headers, 'allow'), new Set(['GET', 'POST', 'OPTIONS']));
    assert.equal(plain.headers.get('access-control-allow-methods'), null);
    // Other methods' 405 lists OPTIONS too, since it is answered.
    assert.deepEqual(
      methodsOf((await app.request('DELETE', '/v1/agents', { key: app.adminKey })).headers, 'allow'),
      new Set(['GET', 'POST', 'OPTIONS']),
    );
  });

  it('refuses preflights from other origins with 403 and no allow headers', async (t) => {
    const app = await startTestApp(t, { mode: 'pglite', env: { CORS_ALLOWED_ORIGINS: ALLOWED } });
    const res = await preflight(app, '/v1/agents', OTHER, 'POST');
    assert.equal(res.status, 403);
    assert.deepEqual(await res.json(), { error: 'Origin not allowed', status: 403 });
    assertNoCors(res.headers);
    assert.equal(res.headers.get('vary'), 'Origin');
    // An actual request from that origin is served (the browser, not the server, withholds it) without CORS headers.
    const actual = await app.request('GET', '/v1/agents', { key: app.adminKey, headers: { origin: OTHER } });
    assert.equal(actual.status, 200);
    assertNoCors(actual.headers);
  });

  it('marks actual responses, errors and SSE streams for an allowed origin', async (t) => {
    const app = await startTestApp(t, { mode: 'pglite', env: { CORS_ALLOWED_ORIGINS: ALLOWED } });
    const { sessionId } = await newSession(app);
    const list = await app.request('GET', '/v1/agents', { key: app.adminKey, headers: { origin: ALLOWED } });
    assert.equal(list.status, 200);
    assert.equal(list.headers.get('access-control-allow-origin'), ALLOWED);
    const exposed = methodsOf(list.headers, 'access-control-expose-headers');
    for (const h of ['Retry-After', 'ETag', 'Location', 'Idempotent-Replayed', 'Mcp-Session-Id']) assert.ok(exposed.has(h), h);
    const denied = await app.request('GET', '/v1/agents', { key: null, headers: { origin: ALLOWED } });
    assert.equal(denied.status, 401);
    assert.equal(denied.headers.get('access-control-allow-origin'), ALLOWED);

    const ac = new AbortController();
    const sse = await fetch(`${app.url}/v1/sessions/${sessionId}/sse`, {
      headers: { origin: ALLOWED, authorization: `Bearer ${app.adminKey}`, accept: 'text/event-stream' },
      signal: ac.signal,
    });
    assert.equal(sse.status, 200);
    assert.equal(sse.headers.get('content-type'), 'text/event-stream');
    assert.equal(sse.headers.get('access-control-allow-origin'), ALLOWED);
    assert.equal(sse.headers.get('vary'), 'Origin');
    ac.abort();
    await sse.body?.cancel().catch(() => {});
  });

  it('with "*" allows any origin, never with credentials', async (t) => {
    const app = await startTestApp(t, { mode: 'pglite', env: { CORS_ALLOWED_ORIGINS: '*' } });
    const pre = await preflight(app, '/v1/agents', OTHER, 'POST');
    assert.equal(pre.status, 204);
    assert.equal(pre.headers.get('access-control-allow-origin'), '*');
    assert.equal(pre.headers.get('access-control-allow-credentials'), null);
    const actual = await app.request('POST', '/v1/agents', {
      key: app.adminKey,
      headers: { origin: OTHER },
      body: { name: 'x', system_prompt: 'p' },
    });
    assert.equal(actual.status, 201);
    assert.equal(actual.headers.get('access-control-allow-origin'), '*');
    assert.equal(actual.headers.get('access-control-allow-credentials'), null);
  });

  it('is off by default: no CORS headers, OPTIONS is 405 with Allow', async (t) => {
    const app = await startTestApp(t, { mode: 'pglite' });
    const { sessionId } = await newSession(app);
    const res = await preflight(app, `/v1/sessions/${sessionId}/sse`, ALLOWED);
    assert.equal(res.status, 405);
    assert.equal(res.headers.get('allow'), 'GET');
    assertNoCors(res.headers);
    assert.equal(res.headers.get('vary'), null);
    const actual = await app.request('GET', '/v1/agents', { key: app.adminKey, headers: { origin: ALLOWED } });
    assert.equal(actual.status, 200);
    assertNoCors(actual.headers);
  });

  it('405 answers carry Allow with the methods of the path', async (t) => {
    const app = await startTestApp(t, { mode: 'pglite' });
    const res = await app.request('DELETE', '/v1/agents', { key: app.adminKey });
    assert.equal(res.status, 405);
    assert.deepEqual(methodsOf(res.headers, 'allow'), new Set(['GET', 'POST']));
    assert.deepEqual(res.body, { error: 'Method not allowed', status: 405 });
  });

  it('rejects settings that are not origins', () => {
    assert.equal(parseCorsOrigins(''), null);
    assert.equal(parseCorsOrigins(' , '), null);
    for (const bad of ['https://a.example/path', 'a.example', 'ftp://a.example', '*, https://a.example']) {
      assert.throws(() => loadConfig({}, { CORS_ALLOWED_ORIGINS: bad }), /CORS_ALLOWED_ORIGINS/, bad);
    }
    const policy = parseCorsOrigins('https://A.example:443, http://b.example:8080/')!;
    assert.ok(policy.allows('https://a.example'));
    assert.ok(policy.allows('http://b.example:8080'));
    assert.ok(!policy.allows('http://a.example'));
  });
});
