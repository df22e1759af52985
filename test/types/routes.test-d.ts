// Compiled by `tsc --noEmit -p .`, never run: each `@ts-expect-error` line must fail to type-check,
// so a route table that lets a wrong reply or an undeclared input through breaks the build.
import { Type } from '@sinclair/typebox';
import { ErrorResponse, IdParams, ref } from '../../schemas/common.js';
import { aliasedListReply } from '../../src/http/aliased-list.js';
import { route } from '../../src/http/index.js';

const Thing = Type.Object({ id: Type.String(), size: Type.Integer() }, { $id: 'Thing' });
const ThingList = Type.Object({ data: Type.Array(ref(Thing)), total: Type.Integer() }, { $id: 'ThingList' });
const ThingQuery = Type.Object({ limit: Type.Integer({ default: 10 }) });
const ThingCreate = Type.Object({ size: Type.Integer() }, { $id: 'ThingCreate' });

const get = {
  method: 'GET',
  path: '/v1/things/:id',
  auth: 'user',
  summary: 'a thing',
  tags: ['things'],
  schema: { params: IdParams, query: ThingQuery, response: { 200: ref(Thing), 304: null, 404: ref(ErrorResponse) } },
} as const;

const list = {
  method: 'GET',
  path: '/v1/things',
  auth: 'user',
  summary: 'things',
  tags: ['things'],
  schema: { response: { 200: ref(ThingList) } },
} as const;

const create = {
  method: 'POST',
  path: '/v1/things',
  auth: 'user',
  summary: 'make a thing',
  tags: ['things'],
  schema: { body: ref(ThingCreate), response: { 201: ref(Thing) } },
} as const;

const upload = { ...create, bodyKind: 'raw' } as const;

// The well-typed handlers compile: input typed by the schemas, replies of declared statuses.
route(get, async ({ params, query }) => ({ status: 200, body: { id: params.id, size: query.limit } }));
route(get, async () => ({ status: 304, headers: { ETag: '"1"' } }));
route(list, async () => aliasedListReply(200, { data: [{ id: 'a', size: 1 }], total: 1 }, 'things'));
route(create, async ({ body }) => ({ status: 201, body: { id: 'a', size: body.size } }));
route(upload, async ({ rawBody }) => ({ status: 201, body: { id: 'a', size: rawBody.length } }));

// @ts-expect-error a body that is not the status's schema (size must be an integer)
route(get, async ({ params }) => ({ status: 200, body: { id: params.id, size: 'big' } }));
// @ts-expect-error a body missing a required field
route(get, async ({ params }) => ({ status: 200, body: { id: params.id } }));
// @ts-expect-error a status the route does not declare
route(get, async ({ params }) => ({ status: 201, body: { id: params.id, size: 1 } }));
// @ts-expect-error a body on a status declared without one
route(get, async () => ({ status: 304, body: { id: 'a', size: 1 } }));
// @ts-expect-error raw bytes where the status declares a JSON schema
route(get, async () => ({ status: 200, raw: '{}', contentType: 'application/json' }));
// @ts-expect-error an SSE reply on a route that declares no event stream
route(get, async () => ({ sse: () => undefined }));
// @ts-expect-error a pre-encoded list whose items are not the schema's
route(list, async () => aliasedListReply(200, { data: [{ id: 1 }], total: 1 }, 'things'));

// @ts-expect-error reading a query field the schema does not declare
route(get, async ({ params, query }) => ({ status: 200, body: { id: params.id, size: query.offset } }));
// @ts-expect-error reading a path param without a params schema
route(list, async ({ params }) => aliasedListReply(200, { data: [{ id: params.id, size: 1 }], total: 1 }, 'things'));
// @ts-expect-error reading a body field the schema does not declare
route(create, async ({ body }) => ({ status: 201, body: { id: body.name, size: body.size } }));
// @ts-expect-error a raw route's body is not parsed: only rawBody carries it
route(upload, async ({ body }) => ({ status: 201, body: { id: 'a', size: body.size } }));
