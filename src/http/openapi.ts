import type { TSchema } from '@sinclair/typebox';
import type { Route } from './route.js';

type Json = Record<string, unknown>;

export interface OpenApiInfo {
  title: string;
  version: string;
  description?: string;
  prefix?: string;
}

/**
 * Builds the OpenAPI 3.1 document from the route table and the named schemas: the document is
 * generated from the implementation, never written by hand (spec section 9).
 */
export function buildOpenApi(routes: Route[], namedSchemas: TSchema[], info: OpenApiInfo): Json {
  const ids = new Set(namedSchemas.map((s) => s.$id as string));
  const paths: Record<string, Record<string, Json>> = {};
  for (const route of routes) {
    const path = openApiPath(route.path, info.prefix ?? '');
    (paths[path] ??= {})[route.method.toLowerCase()] = operation(route, ids);
  }
  const schemas: Record<string, unknown> = {};
  for (const s of namedSchemas) {
    const { $id, ...rest } = toJson(s, ids, true) as Json;
    schemas[$id as string] = rest;
  }
  return {
    openapi: '3.1.0',
    info: { title: info.title, version: info.version, ...(info.description ? { description: info.description } : {}) },
    paths,
    components: {
      schemas,
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'API key or access token' } },
    },
  };
}

/** `/v1/agents/:id` → `/v1/agents/{id}`; `*path` → `{path}`. Unversioned paths get no prefix. */
export function openApiPath(path: string, prefix = ''): string {
  const p = path.replace(/[:*]([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
  return p.startsWith('/v1') ? prefix + p : p;
}

function operation(route: Route, ids: Set<string>): Json {
  const op: Json = {
    operationId: operationId(route),
    summary: route.summary,
    tags: route.tags,
    responses: responses(route, ids),
  };
  const parameters = [...paramList(route.schema.params, 'path', ids), ...paramList(route.schema.query, 'query', ids)];
  if (parameters.length) op['parameters'] = parameters;
  if (route.auth !== 'none') op['security'] = [{ bearer: [] }];
  const body = requestBody(route, ids);
  if (body) op['requestBody'] = body;
  return op;
}

function operationId(route: Route): string {
  const words = route.path.split('/').filter((s) => s && s !== 'v1').map((s) => s.replace(/^[:*]/, 'by_').replace(/[^A-Za-z0-9_]/g, '_'));
  return [route.method.toLowerCase(), ...words].join('_');
}

const SSE_DESCRIPTION = [
  'Server-sent events (spec 6.1). Each session event is one frame: `id: <event id>`, `event: <type>`, then `data: <JSON>`',
  'holding one `Event` (see the `Event_*` schemas; its `type` equals the frame\'s `event:`) and a `retry:` hint.',
  'The first frame is `event: connected` with data `{"status":"connected"}`; `: heartbeat` comment lines keep the',
  'connection alive; before the server closes the stream it sends `event: disconnecting` with data `{reason, retry_ms}`,',
  'and the client reconnects with `Last-Event-ID` (or `since_id`) set to the last id it saw.',
].join(' ');

const SSE_EXAMPLE = [
  'event: connected\ndata: {"status":"connected"}\n',
  'retry: 100\nid: 019a0000-0000-7000-8000-0000000000f0\nevent: turn.started',
  'data: {"id":"019a0000-0000-7000-8000-0000000000f0","type":"turn.started","ts":"2026-11-27T12:00:00.000Z","session_id":"019a0000-0000-7000-8000-0000000000e0","sequence":2,"context":{"turn_id":"019a0000-0000-7000-8000-0000000000f0"},"data":{"turn_id":"019a0000-0000-7000-8000-0000000000f0","input_message_id":"019a0000-0000-7000-8000-000000000002"}}\n',
  ': heartbeat\n',
  'event: disconnecting\ndata: {"reason":"connection_cycle","retry_ms":100}\n',
].join('\n');

function responses(route: Route, ids: Set<string>): Json {
  const out: Json = {};
  for (const [status, schema] of Object.entries(route.schema.response)) {
    const description = Number(status) < 400 ? 'Success' : 'Error';
    if (schema === null) out[status] = { description };
    else if (schema === 'text/event-stream') out[status] = { description: SSE_DESCRIPTION, content: { [schema]: { schema: { type: 'string' }, example: SSE_EXAMPLE } } };
    else if (typeof schema === 'string') out[status] = { description, content: { [schema]: { schema: { type: 'string' } } } };
    else out[status] = { description, content: { 'application/json': { schema: toJson(schema, ids) } } };
  }
  const errorRef = { $ref: '#/components/schemas/ErrorResponse' };
  for (const status of ['400', ...(route.auth === 'none' ? [] : ['401', '403']), '500']) {
    out[status] ??= { description: 'Error', content: { 'application/json': { schema: errorRef } } };
  }
  return out;
}

function requestBody(route: Route, ids: Set<string>): Json | null {
  const kind = route.bodyKind ?? 'json';
  if (kind === 'json' && route.schema.body) {
    return { required: true, content: { 'application/json': { schema: toJson(route.schema.body, ids) } } };
  }
  if (kind === 'raw') return { required: true, content: { '*/*': { schema: { type: 'string', format: 'binary' } } } };
  if (kind === 'multipart') {
    const schema = route.schema.body ? toJson(route.schema.body, ids) : { type: 'object' };
    return { required: true, content: { 'multipart/form-data': { schema } } };
  }
  return null;
}

function paramList(schema: TSchema | undefined, where: 'path' | 'query', ids: Set<string>): Json[] {
  if (!schema) return [];
  const json = toJson(schema, ids) as { properties?: Record<string, Json>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, s]) => ({
    name,
    in: where,
    required: where === 'path' || (json.required ?? []).includes(name),
    schema: s,
  }));
}

/** Plain JSON of a schema with named sub-schemas replaced by component references. */
function toJson(schema: unknown, ids: Set<string>, top = false): unknown {
  if (Array.isArray(schema)) return schema.map((s) => toJson(s, ids));
  if (!schema || typeof schema !== 'object') return schema;
  const obj = schema as Json;
  if (!top && typeof obj['$id'] === 'string' && ids.has(obj['$id'])) return { $ref: `#/components/schemas/${obj['$id']}` };
  const out: Json = {};
  for (const [k, v] of Object.entries(obj)) {
    if (k === '$ref' && typeof v === 'string' && ids.has(v)) out[k] = `#/components/schemas/${v}`;
    else out[k] = toJson(v, ids);
  }
  return out;
}
