import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Writable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import { ErrorResponse, ref } from '../../schemas/common.js';
import { UnauthorizedError } from '../../src/errors.js';
import { createHttpServer, createPipeline, createRouter, createValidation, route, type Authenticate } from '../../src/http/index.js';
import { createLogger } from '../../src/log.js';
import { request } from '../helpers/http.js';

const Echo = Type.Object({ name: Type.String({ maxLength: 10 }) }, { $id: 'Echo', additionalProperties: false });

const routes = [
  route(
    {
      method: 'POST',
      path: '/v1/echo',
      auth: 'user',
      summary: 'echo',
      tags: ['t'],
      schema: { body: ref(Echo), response: { 200: ref(Echo) } },
    },
    async (input) => {
      return { status: 200, body: input.body };
    },
  ),
  route(
    {
      method: 'GET',
      path: '/v1/things/:id',
      auth: 'none',
      summary: 'thing',
      tags: ['t'],
      schema: {
        params: Type.Object({ id: Type.Integer() }),
        query: Type.Object({ tag: Type.Optional(Type.Array(Type.String())) }),
        response: { 200: Type.Object({}) },
      },
    },
    async (input) => {
      return { status: 200, body: { id: input.params.id, tag: input.query.tag ?? null } };
    },
  ),
  route(
    {
      method: 'GET',
      path: '/v1/boom',
      auth: 'none',
      summary: 'throws',
      tags: ['t'],
      schema: { response: { 200: Type.Object({}) } },
    },
    async () => {
      throw new Error('secret internal detail at /srv/db.ts:42');
    },
  ),
];

describe('HTTP core (uWebSockets.js adapter and pipeline)', () => {
  const lines: string[] = [];
  let base = '';
  let close: () => Promise<void>;

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
    const router = createRouter(routes, '/api');
    const authenticate: Authenticate = async (ex) => {
      if (ex.headers['authorization'] !== 'Bearer good-key-0123456789') throw new UnauthorizedError();
      return { org_id: 'o', user_id: 'u', role: 'admin', operator: false, via: 'api_key' };
    };
    const pipeline = createPipeline({ router, validation: createValidation([ErrorResponse, Echo]), authenticate });
    const server = createHttpServer(
      { host: '127.0.0.1', port: 0, maxBodyBytes: 2048, sse: { heartbeatMs: 1000, cycleMs: 10000, maxBufferBytes: 10000 } },
      { log, router, pipeline },
    );
    base = `http://127.0.0.1:${await server.listen()}`;
    close = () => server.close(1000);
  });
  after(() => close());

  const key = 'good-key-0123456789';

  it('routes a valid JSON body to its handler', async () => {
    const r = await request(base, 'POST', '/v1/echo', { key, body: { name: 'x' } });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { name: 'x' });
  });

  it('serves the same route under API_PREFIX', async () => {
    const r = await request(base, 'POST', '/api/v1/echo', { key, body: { name: 'y' } });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { name: 'y' });
  });

  it('coerces path params and collects repeated query keys', async () => {
    const r = await request(base, 'GET', '/v1/things/7?tag=a&tag=b');
    assert.deepEqual(r.body, { id: 7, tag: ['a', 'b'] });
    const bad = await request(base, 'GET', '/v1/things/abc');
    assert.equal(bad.status, 400);
  });

  it('answers unknown routes 404 and wrong methods 405 as JSON', async () => {
    const nf = await request(base, 'GET', '/v1/nope');
    assert.deepEqual(nf.body, { error: 'Not found', status: 404 });
    const na = await request(base, 'DELETE', '/v1/echo', { key });
    assert.deepEqual(na.body, { error: 'Method not allowed', status: 405 });
  });

  it('rejects malformed JSON and schema violations with 400', async () => {
    const bad = await request(base, 'POST', '/v1/echo', { key, raw: '{"name":', headers: { 'content-type': 'application/json' } });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.status, 400);
    assert.match(bad.body.error, /^Invalid request/);
    const extra = await request(base, 'POST', '/v1/echo', { key, body: { name: 'x', other: 1 } });
    assert.equal(extra.status, 400);
    const long = await request(base, 'POST', '/v1/echo', { key, body: { name: 'x'.repeat(11) } });
    assert.equal(long.status, 400);
  });

  it('rejects an oversize body with 413 JSON', async () => {
    const r = await request(base, 'POST', '/v1/echo', {
      key,
      raw: JSON.stringify({ name: 'x'.repeat(5000) }),
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(r.status, 413);
    assert.deepEqual(r.body, { error: 'Payload too large', status: 413 });
  });

  it('checks credentials before the handler runs', async () => {
    const r = await request(base, 'POST', '/v1/echo', { key: null, body: { name: 'x' } });
    assert.deepEqual(r.body, { error: 'Unauthorized', status: 401 });
  });

  it('hides unexpected errors behind a generic 500 and logs them with the request id', async () => {
    const r = await request(base, 'GET', '/v1/boom', { headers: { 'x-request-id': 'req-boom-1' } });
    assert.deepEqual(r.body, { error: 'Internal server error', status: 500 });
    assert.doesNotMatch(r.text, /secret internal|db\.ts/);
    const logged = lines.find((l) => l.includes('unexpected error'));
    assert.ok(logged, 'the error is logged');
    assert.match(logged!, /"reqId":"req-boom-1"/);
  });

  it('redacts authorization from logs', async () => {
    await request(base, 'POST', '/v1/echo', { key, body: { name: 'z' } });
    assert.ok(lines.some((l) => l.includes('"request"')));
    assert.ok(!lines.some((l) => l.includes(key)));
  });
});
