import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Writable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import { ErrorResponse, ListOf, ref } from '../../schemas/common.js';
import { NotFoundError } from '../../src/errors.js';
import { aliasedListReply } from '../../src/http/aliased-list.js';
import { createHttpServer, createPipeline, createRouter, createValidation, route, type Authenticate } from '../../src/http/index.js';
import { createLogger } from '../../src/log.js';
import { request } from '../helpers/http.js';

// Constraints TypeScript cannot see (lengths, formats): a handler can compile and still send
// what the document does not allow; the check stage is what catches it.
const Code = Type.Object({ code: Type.String({ maxLength: 3 }) }, { $id: 'Code', additionalProperties: false });
const CodeList = ListOf(ref(Code), 'CodeList', 'codes');
const Params = Type.Object({ code: Type.String() });
const spec = (path: string) => ({ method: 'GET', path, auth: 'none', summary: path, tags: ['t'] }) as const;

const routes = [
  route({ ...spec('/v1/codes/:code'), schema: { params: Params, response: { 200: ref(Code) } } }, async ({ params }) => ({
    status: 200,
    body: { code: params.code },
  })),
  route({ ...spec('/v1/lists/:code'), schema: { params: Params, response: { 200: ref(CodeList) } } }, async ({ params }) =>
    aliasedListReply(200, { data: [{ code: params.code }], total: 1 }, 'codes'),
  ),
  route({ ...spec('/v1/missing'), schema: { response: { 200: ref(Code) } } }, async () => {
    throw new NotFoundError();
  }),
];

async function serve(checkReplies: boolean): Promise<{ base: string; close: () => Promise<void>; logs: string[] }> {
  const logs: string[] = [];
  const log = createLogger(
    'info',
    new Writable({
      write(c, _e, cb) {
        logs.push(String(c));
        cb();
      },
    }),
  );
  const router = createRouter(routes);
  const authenticate: Authenticate = async () => {
    throw new Error('no route here needs a caller');
  };
  const pipeline = createPipeline({
    router,
    validation: createValidation([ErrorResponse, Code, CodeList]),
    authenticate,
    ...(checkReplies ? { checkRepliesWith: ErrorResponse } : {}),
  });
  const server = createHttpServer(
    { host: '127.0.0.1', port: 0, maxBodyBytes: 2048, sse: { heartbeatMs: 1000, cycleMs: 10000, maxBufferBytes: 10000 } },
    { log, router, pipeline },
  );
  const base = `http://127.0.0.1:${await server.listen()}`;
  return { base, close: () => server.close(1000), logs };
}

describe('response check (RESPONSE_VALIDATION)', () => {
  let checked: Awaited<ReturnType<typeof serve>>;
  let unchecked: Awaited<ReturnType<typeof serve>>;
  before(async () => {
    checked = await serve(true);
    unchecked = await serve(false);
  });
  after(async () => {
    await checked.close();
    await unchecked.close();
  });

  it('GET - a reply that matches its status schema passes unchanged', async () => {
    const r = await request(checked.base, 'GET', '/v1/codes/abc');
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { code: 'abc' });
  });

  it('GET - a JSON body outside its schema becomes a 500 naming the route, status and field', async () => {
    const r = await request(checked.base, 'GET', '/v1/codes/toolong');
    assert.equal(r.status, 500);
    assert.match(
      r.body.error,
      /^Response does not match the schema of GET \/v1\/codes\/:code 200: \/code must NOT have more than 3 characters/,
    );
    assert.ok(checked.logs.some((l) => l.includes('Response does not match the schema')));
  });

  it('GET - pre-encoded JSON bytes are checked as sent', async () => {
    assert.equal((await request(checked.base, 'GET', '/v1/lists/abc')).status, 200);
    const r = await request(checked.base, 'GET', '/v1/lists/toolong');
    assert.equal(r.status, 500);
    assert.match(r.body.error, /GET \/v1\/lists\/:code 200: \/data\/0\/code must NOT have more than 3 characters/);
  });

  it('GET - an error status the route does not declare is checked against ErrorResponse', async () => {
    const r = await request(checked.base, 'GET', '/v1/missing');
    assert.equal(r.status, 404);
    assert.deepEqual(r.body, { error: 'Not found', status: 404 });
  });

  it('GET - without the check the service sends what the handler returned', async () => {
    const r = await request(unchecked.base, 'GET', '/v1/codes/toolong');
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { code: 'toolong' });
  });
});
