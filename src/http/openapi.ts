import type { TSchema } from '@sinclair/typebox';
import { addExamples } from './openapi-examples.js';
import { MAX_IDEMPOTENCY_KEY_LENGTH } from './idempotency.js';
import { isJsonOrRaw } from './reply.js';
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
  addDiscriminatorMappings(schemas);
  markReadOnly(paths, schemas);
  addExamples(paths, schemas);
  return {
    openapi: '3.1.0',
    info: {
      title: info.title,
      version: info.version,
      ...(info.description ? { description: info.description } : {}),
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    // Relative to where this document is served; versioned paths already carry any API prefix.
    servers: [{ url: '/', description: 'The service that serves this document' }],
    security: [{ bearer: [] }],
    paths,
    components: {
      schemas,
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'API key or access token' } },
    },
  };
}

/**
 * A `discriminator` without `mapping` names variants by schema name (`Event_turn_started`);
 * the mapping gives each variant's `const` value (`turn.started`), which is what the wire carries
 * and what generators such as openapi-typescript put in the union.
 */
function addDiscriminatorMappings(schemas: Record<string, unknown>): void {
  for (const schema of Object.values(schemas) as Json[]) {
    const d = schema['discriminator'] as { propertyName: string; mapping?: Record<string, string> } | undefined;
    const variants = (schema['oneOf'] ?? schema['anyOf']) as { $ref?: string }[] | undefined;
    if (!d || d.mapping || !variants) continue;
    const mapping: Record<string, string> = {};
    for (const v of variants) {
      const target = v.$ref ? (schemas[v.$ref.split('/').pop()!] as Json | undefined) : undefined;
      const value = (target?.['properties'] as Record<string, Json> | undefined)?.[d.propertyName]?.['const'];
      if (typeof value === 'string' && v.$ref) mapping[value] = v.$ref;
    }
    if (Object.keys(mapping).length === variants.length) d.mapping = mapping;
  }
}

/** Fields the service sets: `readOnly` in schemas that only responses use. */
const SERVER_SET_FIELDS = ['id', 'organization_id', 'status', 'created_at', 'updated_at', 'sequence', 'ts', 'features'];

function markReadOnly(paths: Record<string, Record<string, Json>>, schemas: Record<string, unknown>): void {
  const inputs = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (!node || typeof node !== 'object') return;
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') {
        const name = v.split('/').pop()!;
        if (!inputs.has(name)) {
          inputs.add(name);
          visit(schemas[name]);
        }
      } else visit(v);
    }
  };
  for (const ops of Object.values(paths)) for (const op of Object.values(ops)) visit([op['parameters'], op['requestBody']]);
  for (const [name, schema] of Object.entries(schemas)) {
    if (inputs.has(name)) continue;
    const props = (schema as { properties?: Record<string, Json> }).properties ?? {};
    for (const field of SERVER_SET_FIELDS) if (props[field]) props[field] = { ...props[field], readOnly: true };
  }
}

const IDEMPOTENCY_KEY_PARAMETER: Json = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes a retry safe: a repeat within 24 h with the same key, method, path and body returns the first outcome ' +
    '(same status and body, header Idempotent-Replayed: true) instead of running again; the same key with another ' +
    'request is 422; while the first is still running, 409 with Retry-After. Keys are per organisation. ' +
    'Errors 5xx, 409 and 429 are not kept: a retry runs anew.',
  schema: { type: 'string', minLength: 1, maxLength: MAX_IDEMPOTENCY_KEY_LENGTH, pattern: '^[\\x21-\\x7E]+$' },
};

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
  if (route.idempotent) parameters.push(IDEMPOTENCY_KEY_PARAMETER);
  if (parameters.length) op['parameters'] = parameters;
  op['security'] = route.auth === 'none' ? [] : [{ bearer: [] }];
  const body = requestBody(route, ids);
  if (body) op['requestBody'] = body;
  return op;
}

function operationId(route: Route): string {
  const words = route.path
    .split('/')
    .filter((s) => s && s !== 'v1')
    .map((s) => s.replace(/^[:*]/, 'by_').replace(/[^A-Za-z0-9_]/g, '_'));
  return [route.method.toLowerCase(), ...words].join('_');
}

const SSE_DESCRIPTION = [
  'Server-sent events (spec 6.1). Each session event is one frame: `id: <event id>`, `event: <type>`, then `data: <JSON>`',
  "holding one `Event` (see the `Event_*` schemas; its `type` equals the frame's `event:`) and a `retry:` hint.",
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
    else if (schema === 'text/event-stream')
      out[status] = { description: SSE_DESCRIPTION, content: { [schema]: { schema: { type: 'string' }, example: SSE_EXAMPLE } } };
    else if (typeof schema === 'string') out[status] = { description, content: { [schema]: { schema: { type: 'string' } } } };
    else if (isJsonOrRaw(schema))
      out[status] = {
        description,
        content: { 'application/json': { schema: toJson(schema.json, ids) }, [schema.raw]: { schema: { type: 'string' } } },
      };
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
    // A query parameter with a default may be left out, whatever the validator's `required` says.
    required: where === 'path' || ((json.required ?? []).includes(name) && s['default'] === undefined),
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
