import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Writable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import { ErrorResponse, ref } from '../../schemas/common.js';
import { createHttpServer, createPipeline, createRouter, createValidation, route, type Authenticate } from '../../src/http/index.js';
import { DEFAULT_MAX_JSON_DEPTH, isCleanString, scanJson } from '../../src/http/input-hygiene.js';
import { createLogger } from '../../src/log.js';
import { request } from '../helpers/http.js';

const scan = (text: string, depth = 64) => scanJson(Buffer.from(text), depth);
const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

describe('scanJson - one linear pass before JSON.parse', () => {
  it('allows nesting up to the limit and refuses one level more', () => {
    assert.equal(scan(nested(64)), null);
    assert.equal(scan(nested(65)), 'too_deep');
    assert.equal(scan('{"a":'.repeat(65) + '1' + '}'.repeat(65)), 'too_deep');
    assert.equal(scan('[' + '[],'.repeat(10_000) + '[]]'), null, 'siblings do not add up');
  });

  it('ignores brackets and quotes inside strings', () => {
    assert.equal(scan(`{"a":"${'['.repeat(1000)}"}`), null);
    assert.equal(scan(`{"a":"\\"${'{'.repeat(1000)}"}`), null, 'an escaped quote does not end the string');
    assert.equal(scan(`["\\\\", ${nested(64)}]`), 'too_deep', 'an escaped backslash does not escape the closing quote');
  });

  it('finds \\u0000 and unpaired surrogate escapes, in values and keys', () => {
    assert.equal(scan('{"a":"x\\u0000"}'), 'nul');
    assert.equal(scan('{"\\u0000":1}'), 'nul');
    assert.equal(scan('["\\ud800"]'), 'lone_surrogate');
    assert.equal(scan('["\\uD800x"]'), 'lone_surrogate');
    assert.equal(scan('["\\ud800\\n"]'), 'lone_surrogate');
    assert.equal(scan('["\\udc00"]'), 'lone_surrogate');
    assert.equal(scan('["\\udfff\\ud800"]'), 'lone_surrogate');
    assert.equal(scan('["\\ud800\\ud800"]'), 'lone_surrogate');
  });

  it('passes what is clean: pairs, other escapes, a literal backslash-u', () => {
    assert.equal(scan('["\\ud83d\\ude00", "\\u00e9\\n\\t\\"", "\\\\u0000", "😀"]'), null);
    assert.equal(scan('{"a":1e400,"b":[true,false,null]}'), null);
  });

  it('leaves malformed JSON to JSON.parse', () => {
    assert.equal(scan('{"a":"\\u12'), null);
    assert.equal(scan('{"a":'), null);
  });

  it('isCleanString: no NUL, no lone surrogate', () => {
    assert.equal(isCleanString('plain ünïcødé 😀'), true);
    assert.equal(isCleanString('a\u0000b'), false);
    assert.equal(isCleanString('a\ud800b'), false);
    assert.equal(isCleanString('\udc00'), false);
  });
});

const Result = Type.Object({ result: Type.Unknown(), name: Type.Optional(Type.String()) }, { $id: 'Result', additionalProperties: false });
const routes = [
  route(
    {
      method: 'POST',
      path: '/v1/items/:id',
      auth: 'none',
      summary: 'accepts any JSON result',
      tags: ['t'],
      schema: { params: Type.Object({ id: Type.String() }), body: ref(Result), response: { 200: Type.Object({}) } },
    },
    async (input) => {
      return { status: 200, body: { id: input.params.id, name: input.body.name ?? null } };
    },
  ),
  route(
    {
      method: 'GET',
      path: '/v1/items',
      auth: 'none',
      summary: 'a paginated list',
      tags: ['t'],
      schema: {
        query: Type.Object({
          offset: Type.Integer({ minimum: 0, maximum: 2_147_483_647, default: 0 }),
          limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
          q: Type.Optional(Type.String()),
        }),
        response: { 200: Type.Object({}) },
      },
    },
    async (input) => {
      return { status: 200, body: input.query };
    },
  ),
  route(
    {
      method: 'GET',
      path: '/v1/echo-header',
      auth: 'none',
      summary: 'echoes a header',
      tags: ['t'],
      schema: { response: { 200: Type.Object({}) } },
    },
    async (input) => {
      return { status: 200, body: { value: input.headers['x-note'] ?? null } };
    },
  ),
];

describe('input hygiene through the pipeline (real HTTP)', () => {
  let base = '';
  let close: () => Promise<void>;
  const lines: string[] = [];

  before(async () => {
    const log = createLogger(
      'info',
      new Writable({
        write(c, _e, cb) {
          lines.push(String(c));
          cb();
        },
      }),
    );
    const router = createRouter(routes);
    const authenticate: Authenticate = async () => ({ org_id: 'o', user_id: 'u', role: 'admin', operator: false, via: 'api_key' });
    const pipeline = createPipeline({
      router,
      validation: createValidation([ErrorResponse, Result]),
      authenticate,
      maxJsonDepth: DEFAULT_MAX_JSON_DEPTH,
    });
    const server = createHttpServer(
      { host: '127.0.0.1', port: 0, maxBodyBytes: 1_000_000, sse: { heartbeatMs: 1000, cycleMs: 10000, maxBufferBytes: 10000 } },
      { log, router, pipeline },
    );
    base = `http://127.0.0.1:${await server.listen()}`;
    close = () => server.close(1000);
  });
  after(() => close());

  async function expect400(path: string, init: { method?: string; raw?: string; headers?: Record<string, string> } = {}, message?: RegExp) {
    const r = await request(base, init.method ?? 'GET', path, {
      raw: init.raw,
      headers: init.headers ?? (init.raw ? { 'content-type': 'application/json' } : {}),
    });
    assert.equal(r.status, 400, `${path}: ${r.status} ${r.text}`);
    assert.deepEqual(Object.keys(r.body).sort(), ['error', 'status']);
    assert.equal(r.body.status, 400);
    if (message) assert.match(r.body.error, message);
  }

  it('numeric query parameters must be finite integers within bounds', async () => {
    for (const q of [
      'limit=1e309',
      'limit=Infinity',
      'limit=-1',
      'limit=1.5',
      'limit=NaN',
      'limit=0',
      'limit=101',
      'offset=99999999999999999999',
      'offset=1e309',
      'offset=-1e309',
      'offset=-1',
      'limit=1&limit=2',
    ]) {
      await expect400(`/v1/items?${q}`, {}, /query\.(limit|offset)/);
    }
    const ok = await request(base, 'GET', '/v1/items?limit=100&offset=2147483647');
    assert.deepEqual(ok.body, { limit: 100, offset: 2147483647 });
  });

  it('NUL and unpaired surrogates in query, path and headers → 400', async () => {
    await expect400('/v1/items?q=a%00b', {}, /query\.q contains a NUL character or an unpaired surrogate/);
    await expect400('/v1/items?a%00=1', {}, /query/);
    await expect400('/v1/items/a%00b', { method: 'POST', raw: '{"result":1}' }, /params\.id/);
    // Invalid UTF-8 in a path segment never becomes a string: the route does not match.
    assert.equal(
      (await request(base, 'POST', '/v1/items/%ED%A0%80', { raw: '{"result":1}', headers: { 'content-type': 'application/json' } })).status,
      404,
    );
    // On the query, URLSearchParams turns it into U+FFFD, which is clean.
    assert.equal((await request(base, 'GET', '/v1/items?q=%ED%A0%80')).status, 200);
    const latin1 = await request(base, 'GET', '/v1/echo-header', { headers: { 'x-note': 'caf\u00e9' } });
    assert.equal(latin1.status, 200, 'a Latin-1 header value is fine');
  });

  it('NUL and unpaired surrogates anywhere in a JSON body → 400', async () => {
    await expect400('/v1/items/1', { method: 'POST', raw: '{"result":"\\u0000"}' }, /body contains a NUL/);
    await expect400('/v1/items/1', { method: 'POST', raw: '{"result":{"\\ud800":1}}' }, /body contains/);
    await expect400('/v1/items/1', { method: 'POST', raw: '{"result":["ok","\\udc00"]}' });
    const ok = await request(base, 'POST', '/v1/items/1', { body: { result: ['😀', 'é'], name: 'x' } });
    assert.equal(ok.status, 200);
  });

  it('JSON nested beyond MAX_JSON_DEPTH → 400 before parsing; a 10,000-level document too', async () => {
    const wrap = (depth: number) => `{"result":${nested(depth - 1)}}`;
    assert.equal(
      (await request(base, 'POST', '/v1/items/1', { raw: wrap(64), headers: { 'content-type': 'application/json' } })).status,
      200,
    );
    await expect400('/v1/items/1', { method: 'POST', raw: wrap(65) }, /nests deeper than 64 levels/);
    await expect400('/v1/items/1', { method: 'POST', raw: `{"result":${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}}` }, /nests deeper/);
    await expect400('/v1/items/1', { method: 'POST', raw: '['.repeat(500_000) }, /nests deeper/);
    assert.ok(!lines.some((l) => l.includes('unexpected error')), 'nothing reached the 500 path');
  });
});
