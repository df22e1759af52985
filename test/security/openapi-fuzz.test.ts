import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TSchema } from '@sinclair/typebox';
import { GENERIC_HARNESS_ID } from '../../schemas/harnesses.js';
import { namedSchemas } from '../../schemas/index.js';
import type { Route } from '../../src/http/index.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { createKey, createOrgWithAdmin, createUser, login } from '../api/auth/helpers.js';

/**
 * A seeded, bounded fuzzer over every route of the live route table (`app.routes`, the source of
 * the generated OpenAPI document). An admin of a real organisation first creates one resource of
 * each kind through the API, so ids resolve and handlers run past their lookups; then each route
 * gets a valid request with exactly one mutation (a path parameter, a query parameter, a body field,
 * the whole body, the content type or a header). The run must produce no 5xx, every 4xx must be
 * exactly `{error, status}`, and the instance must stay healthy. The seed is fixed, so a failure
 * repeats; FUZZ_SEED and FUZZ_REQUESTS explore further without touching the code.
 */

const SEED = Number(process.env['FUZZ_SEED'] ?? 0x5eed_1e12);
const BUDGET = Number(process.env['FUZZ_REQUESTS'] ?? 3000);
const REQUEST_TIMEOUT_MS = 10_000;
/** Well below uWS's 4 KiB header block: a longer URL is answered by the transport (431), not by us. */
const LONG_URL_TEXT = 'x'.repeat(1000);
const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a5b1d3e70000000049454e44ae426082',
  'hex',
);

/** mulberry32: a tiny, well-mixed 32-bit PRNG; the same seed gives the same run. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function shuffle<T>(items: T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

// ---------------------------------------------------------------- valid values from the schemas

const schemaById = new Map(namedSchemas.map((s) => [s.$id as string, s]));
/** Field names whose value must be the id of a resource the fuzzer created. */
const ID_FIELDS: Record<string, string> = {
  harness_id: '/v1/harnesses',
  agent_id: '/v1/agents',
  model_id: '/v1/llm-models',
  provider_id: '/v1/llm-providers',
  image_id: '/v1/images',
  session_id: '/v1/sessions',
};
const PATTERN_SAMPLES = ['fuzz', 'github', 'FUZZ_1', 'a', 'a1', 'x-1', '1', '#fuzz'];

/** A value that satisfies `schema`, preferring real ids for id-named fields. */
function sample(schema: TSchema, ids: Map<string, string>, field = ''): unknown {
  const s = schema as Record<string, any>;
  if (s['$ref']) return sample(schemaById.get(s['$ref'])!, ids, field);
  if (s['const'] !== undefined) return s['const'];
  if (s['default'] !== undefined) return structuredClone(s['default']);
  if (Array.isArray(s['enum'])) return s['enum'][0];
  if (Array.isArray(s['anyOf'])) return sample(s['anyOf'].find((v: any) => v.type !== 'null') ?? s['anyOf'][0], ids, field);
  if (Array.isArray(s['allOf'])) return Object.assign({}, ...s['allOf'].map((v: TSchema) => sample(v, ids, field)));
  switch (s['type']) {
    case 'object': {
      const out: Record<string, unknown> = {};
      const props: Record<string, TSchema> = s['properties'] ?? {};
      const required: string[] = s['required'] ?? [];
      for (const [k, v] of Object.entries(props)) if (required.includes(k) || ID_FIELDS[k]) out[k] = sample(v, ids, k);
      if (s['patternProperties'] && (s['minProperties'] ?? 0) > 0) {
        const [pattern, value] = Object.entries(s['patternProperties'] as Record<string, TSchema>)[0]!;
        out[PATTERN_SAMPLES.find((p) => new RegExp(pattern).test(p)) ?? 'FUZZ_1'] = sample(value, ids);
      }
      return out;
    }
    case 'array':
      return s['minItems'] ? Array.from({ length: s['minItems'] }, () => sample(s['items'], ids, field)) : [];
    case 'string': {
      if (ID_FIELDS[field] && ids.has(ID_FIELDS[field])) return ids.get(ID_FIELDS[field]);
      if (field === 'base_url') return 'http://127.0.0.1:9/v1';
      if (s['format'] === 'email') return `fuzz-${field || 'x'}@example.test`;
      if (s['format'] === 'uri') return 'http://127.0.0.1:9/';
      if (s['format'] === 'uuid') return '0190e0a0-0000-7000-8000-000000000000';
      if (s['format'] === 'date-time') return '2030-01-01T00:00:00.000Z';
      if (s['pattern']) return PATTERN_SAMPLES.find((p) => new RegExp(s['pattern']).test(p)) ?? 'fuzz';
      const min = s['minLength'] ?? 1;
      return field === 'password' ? 'fuzz-password-123456' : 'fuzz'.padEnd(Math.min(Math.max(min, 4), s['maxLength'] ?? 64), 'z');
    }
    case 'integer':
    case 'number':
      return s['minimum'] ?? 1;
    case 'boolean':
      return false;
    case 'null':
      return null;
    default:
      return 'fuzz';
  }
}

function resolve(schema: TSchema | undefined): Record<string, any> | undefined {
  const s = schema as Record<string, any> | undefined;
  return s?.['$ref'] ? resolve(schemaById.get(s['$ref'])) : s;
}

// ---------------------------------------------------------------- the mutations

/** Replaces a placeholder string in JSON text by raw JSON text (numbers JSON.stringify cannot write). */
const RAW = '\u0001raw:';
const nest = (depth: number, open: string, close: string, leaf = '0') => open.repeat(depth) + leaf + close.repeat(depth);
const deepObject = (depth: number) => '{"a":'.repeat(depth) + '0' + '}'.repeat(depth);

const BODY_VALUES: unknown[] = [
  null,
  true,
  0,
  -1,
  1.5,
  1e308,
  -1e308,
  2 ** 53 + 1,
  '',
  'x',
  '\u0000',
  'a\u0000b',
  'a\ud800b',
  '\udc00',
  '\ud83d',
  '../../../etc/passwd',
  '/workspace/../../etc/passwd',
  '😀 ünïcødé \u202e\u200b',
  'x'.repeat(100_000),
  [],
  [1, 'a', null],
  {},
  { __proto__: null, polluted: true },
  '1e309',
  'NaN',
  '<script>alert(1)</script>',
  "' OR 1=1 --",
  `${RAW}1e400`,
  `${RAW}-1e400`,
  `${RAW}-0`,
  `${RAW}${nest(100, '[', ']')}`,
  `${RAW}${deepObject(10_000)}`,
  `${RAW}{"__proto__":{"x":1}}`,
  `${RAW}"\\u0000"`,
  `${RAW}"\\ud800"`,
  `${RAW}"\\udfff\\ud800"`,
];

/** Query and path values, as they go on the wire (already percent-encoded where they must be). */
const WIRE_VALUES = [
  '',
  '-1',
  '0',
  '1.5',
  '1e309',
  '-1e309',
  'NaN',
  'Infinity',
  '99999999999999999999',
  '%00',
  'a%00b',
  '%ED%A0%80',
  '%ED%B0%80',
  '%FF',
  '%',
  '%zz',
  'true',
  'null',
  '%F0%9F%98%80',
  '..',
  '%2e%2e%2f%2e%2e%2fetc%2fpasswd',
  'not-a-uuid',
  '00000000-0000-0000-0000-000000000000',
  LONG_URL_TEXT,
  '%27%20OR%201%3D1--',
  '%5B%5D',
  '%7B%7D',
  'C%CC%A7',
];
const REST_PATH_VALUES = [
  '..%2F..%2Fetc%2Fpasswd',
  '../../etc/passwd',
  'a/../../b',
  'a//b',
  '.',
  '%00',
  'a%00.txt',
  '%ED%A0%80.txt',
  `${LONG_URL_TEXT}.txt`,
  '%F0%9F%98%80.md',
  'dir/',
  '~/.ssh/id_rsa',
];

const WHOLE_BODIES: (string | Buffer)[] = [
  '',
  '{',
  'null',
  '[]',
  '"s"',
  '1',
  '{"a":1,}',
  '\ufeff{}',
  '{"a":1}{"b":2}',
  nest(10_000, '[', ']'),
  nest(65, '[', ']'),
  deepObject(10_000),
  deepObject(65),
  Buffer.from([0x7b, 0xff, 0xfe, 0x7d]),
  '{"\\u0000":1}',
  '{"\\ud800":1}',
  '{"a":"\\uDC00"}',
  '[' + '0,'.repeat(100_000) + '0]',
  Buffer.from('{"a":"\u0000"}'),
  Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d]),
];
const CONTENT_TYPES = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=zz',
  'application/json; charset=utf-16',
  'application/xml',
  'image/png',
];
const HEADER_MUTATIONS: Record<string, string>[] = [
  { 'x-request-id': 'ÿÿ\u00ff' },
  { 'x-request-id': 'x'.repeat(1000) },
  { 'if-none-match': '"\u00ff"' },
  { 'if-none-match': '*' },
  { 'x-forwarded-for': 'not-an-ip, 999.999.999.999' },
  { accept: 'text/event-stream' },
  { 'accept-encoding': 'gzip;q=1e309' },
  { 'content-type': 'application/json; boundary=\u00ff' },
  { range: 'bytes=99999999999999999999-' },
];
const RAW_BODIES: (string | Buffer)[] = [
  '',
  Buffer.from([0, 1, 2, 0xff, 0xfe]),
  '---\nname: fuzz\n---\nhello',
  'name: [\n',
  'name: "\\0"\n',
  '{"name":"\\u0000"}',
  '{"name":"\\ud800"}',
  nest(10_000, '[', ']'),
  deepObject(10_000),
  `tags:\n${'- '.repeat(10_000)}x`,
  'a: &a [1]\nb: &b [*a,*a,*a,*a]\nc: [*b,*b,*b,*b]\n',
  '\ufeff{}',
  PNG,
  'x'.repeat(100_000),
  '---\nname: x\n---\nNUL \u0000 here',
  'name: "\\ud800"\nsystem_prompt: y\n',
];

interface FuzzRequest {
  label: string;
  method: string;
  path: string;
  query: string;
  body?: string | Buffer | FormData;
  headers: Record<string, string>;
}

/** JSON text of `body`, with RAW placeholders spliced in as raw JSON. */
function jsonText(body: unknown): string {
  return JSON.stringify(body).replace(/"\\u0001raw:((?:[^"\\]|\\.)*)"/g, (_m, raw: string) => JSON.parse(`"${raw}"`));
}

function multipartBody(
  sessionId: string,
  parts: { name: string; value: string | Buffer; filename?: string }[] = [{ name: 'file', value: PNG, filename: 'dot.png' }],
): FormData {
  const fd = new FormData();
  fd.append('session_id', sessionId);
  for (const p of parts) {
    if (p.filename !== undefined) fd.append(p.name, new Blob([p.value]), p.filename);
    else fd.append(p.name, String(p.value));
  }
  return fd;
}

/** Every single-mutation request for one route; samplePlan picks a share of them. */
function mutationsFor(route: Route, ids: Map<string, string>): FuzzRequest[] {
  const pathParams = route.path.split('/').filter((s) => s.startsWith(':') || s.startsWith('*'));
  const validParam = (seg: string): string => {
    if (seg.startsWith('*')) return 'fuzz/notes.txt';
    const name = seg.slice(1);
    if (name === 'provider') return 'github';
    return ids.get(collectionOf(route, seg)!) ?? '0190e0a0-0000-7000-8000-000000000000';
  };
  const buildPath = (override?: { seg: string; value: string }) =>
    route.path
      .split('/')
      .map((s) => (s.startsWith(':') || s.startsWith('*') ? (override?.seg === s ? override.value : encodeURI(validParam(s))) : s))
      .join('/');
  const querySchema = resolve(route.schema.query);
  const queryProps = Object.keys(querySchema?.['properties'] ?? {});
  const validQuery = queryProps
    .filter((k) => k === 'session_id')
    .map((k) => `${k}=${ids.get('/v1/sessions')}`)
    .join('&');
  const kind = route.bodyKind ?? 'json';
  const bodySchema = kind === 'json' && route.schema.body ? route.schema.body : undefined;
  const validBody = bodySchema ? sample(bodySchema, ids) : undefined;
  const baseHeaders: Record<string, string> = bodySchema
    ? { 'content-type': 'application/json' }
    : kind === 'raw'
      ? { 'content-type': 'application/octet-stream' }
      : {};
  const validRawBody = (): string | Buffer | FormData | undefined =>
    kind === 'multipart'
      ? multipartBody(ids.get('/v1/sessions')!)
      : kind === 'raw'
        ? route.path.includes('import')
          ? '---\nname: fuzz-import\n---\nHello'
          : 'fuzz'
        : bodySchema
          ? jsonText(validBody)
          : undefined;
  const out: FuzzRequest[] = [];
  const add = (label: string, r: Partial<FuzzRequest>) =>
    out.push({
      label,
      method: route.method,
      path: buildPath(),
      query: validQuery,
      body: validRawBody(),
      headers: { ...baseHeaders },
      ...r,
    });

  for (const seg of pathParams) {
    for (const v of seg.startsWith('*') ? [...REST_PATH_VALUES, ...WIRE_VALUES.slice(0, 14)] : WIRE_VALUES)
      add(`path ${seg}=${v.slice(0, 40)}`, { path: buildPath({ seg, value: v }) });
  }
  for (const k of [...queryProps, 'unknown_field']) {
    for (const v of WIRE_VALUES) add(`query ${k}=${v.slice(0, 40)}`, { query: [validQuery, `${k}=${v}`].filter(Boolean).join('&') });
    add(`query ${k} repeated`, { query: [validQuery, `${k}=1&${k}=2&${k}=%00`].filter(Boolean).join('&') });
  }
  if (bodySchema && validBody && typeof validBody === 'object' && !Array.isArray(validBody)) {
    const props = Object.keys(resolve(bodySchema)?.['properties'] ?? {});
    for (const field of [...new Set([...props, 'unknown_field', '__proto__'])]) {
      for (const v of BODY_VALUES)
        add(`body.${field}=${String(JSON.stringify(v) ?? v).slice(0, 40)}`, { body: jsonText({ ...(validBody as object), [field]: v }) });
      // One level down: the first nested object or array item of this field, when there is one.
      const nested = (validBody as Record<string, unknown>)[field];
      const inner = Array.isArray(nested) ? nested[0] : nested;
      if (inner && typeof inner === 'object') {
        for (const innerField of Object.keys(inner)) {
          for (const v of BODY_VALUES) {
            const mutated = { ...(inner as object), [innerField]: v };
            add(`body.${field}.${innerField}=${String(JSON.stringify(v) ?? v).slice(0, 40)}`, {
              body: jsonText({ ...(validBody as object), [field]: Array.isArray(nested) ? [mutated] : mutated }),
            });
          }
        }
      }
    }
  }
  if (kind === 'json')
    for (const b of WHOLE_BODIES) add(`whole body ${String(b).slice(0, 40)}`, { body: b, headers: { 'content-type': 'application/json' } });
  if (kind === 'raw')
    for (const b of [...RAW_BODIES, ...WHOLE_BODIES])
      for (const ct of ['application/octet-stream', 'application/json', 'text/markdown', 'application/yaml'])
        add(`raw body (${ct}) ${String(b).slice(0, 40)}`, { body: b, headers: { 'content-type': ct } });
  if (kind === 'multipart') {
    const sid = ids.get('/v1/sessions')!;
    for (const parts of [
      [],
      [{ name: 'file', value: 'not an image', filename: 'a.png' }],
      [{ name: 'file', value: PNG, filename: 'a\u0000b.png' }],
      [{ name: 'file', value: PNG, filename: 'a\ud800.png' }],
      [{ name: 'file', value: PNG, filename: 'x'.repeat(5000) }],
      [{ name: 'file', value: PNG, filename: '../../etc/passwd' }],
      [{ name: 'file\u0000', value: PNG, filename: 'a.png' }],
      [{ name: 'file', value: 'text' }],
      [{ name: 'file', value: PNG, filename: '' }],
    ])
      add(`multipart ${JSON.stringify(parts.map((p) => ({ ...p, value: typeof p.value }))).slice(0, 60)}`, {
        body: multipartBody(sid, parts),
      });
    for (const v of WIRE_VALUES) add(`multipart session_id=${v.slice(0, 30)}`, { body: multipartBody(decodeURIComponentSafe(v), []) });
    for (const b of WHOLE_BODIES)
      add(`multipart raw ${String(b).slice(0, 30)}`, { body: b, headers: { 'content-type': 'multipart/form-data; boundary=zz' } });
  }
  for (const ct of CONTENT_TYPES) add(`content-type ${ct}`, { headers: { 'content-type': ct } });
  add('no content-type', { headers: {} });
  for (const h of HEADER_MUTATIONS) add(`header ${JSON.stringify(h).slice(0, 50)}`, { headers: { ...baseHeaders, ...h } });
  return out;
}

/** The mutation's slot: which parameter, field or part of the request it changes. */
function slotOf(label: string): string {
  const eq = label.indexOf('=');
  if (eq > 0 && /^(path|query|body\.|multipart session_id)/.test(label)) return label.slice(0, eq);
  return label.split(' ').slice(0, 2).join(' ');
}

/**
 * Picks `budget` requests round-robin over every (route, slot) pair, each slot's mutations in
 * seeded random order, so every parameter and field of every route gets its share.
 */
function samplePlan(
  perRoute: { route: Route; requests: FuzzRequest[] }[],
  budget: number,
  random: () => number,
): { route: Route; r: FuzzRequest }[] {
  const queues: { route: Route; items: FuzzRequest[] }[] = [];
  for (const { route, requests } of perRoute) {
    const bySlot = new Map<string, FuzzRequest[]>();
    for (const r of requests) bySlot.set(slotOf(r.label), [...(bySlot.get(slotOf(r.label)) ?? []), r]);
    for (const items of bySlot.values()) queues.push({ route, items: shuffle(items, random) });
  }
  const chosen: { route: Route; r: FuzzRequest }[] = [];
  for (let round = 0; chosen.length < budget && queues.some((q) => q.items.length > round); round++) {
    for (const q of shuffle(queues, random)) {
      if (chosen.length >= budget) break;
      const r = q.items[round];
      if (r) chosen.push({ route: q.route, r });
    }
  }
  // Deletes last, so the resources they remove serve every other route first.
  const order = new Map(perRoute.map(({ route }, i) => [route, i]));
  return chosen.sort((a, b) => order.get(a.route)! - order.get(b.route)!);
}

function decodeURIComponentSafe(v: string): string {
  try {
    return decodeURIComponent(v);
  } catch {
    return v;
  }
}

/** `/v1/sessions/:id/fs/*path` with `:id` → `/v1/sessions`: the collection a path parameter names. */
function collectionOf(route: Route, seg: string): string | null {
  const segs = route.path.split('/');
  const i = segs.indexOf(seg);
  if (i <= 0) return null;
  const col = segs.slice(0, i).join('/');
  return col === '/v1/llm-models' && segs[i] === ':id' ? '/v1/llm-models' : col;
}

// ---------------------------------------------------------------- running

interface Outcome {
  status: number;
  contentType: string;
  text: string;
}

async function send(app: TestApp, key: string, r: FuzzRequest): Promise<Outcome> {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), REQUEST_TIMEOUT_MS);
  try {
    const headers: Record<string, string> = { authorization: `Bearer ${key}`, ...r.headers };
    const url = app.url + r.path + (r.query ? `?${r.query}` : '');
    const res = await fetch(url, { method: r.method, headers, body: r.method === 'GET' ? undefined : r.body, signal: ac.signal });
    const contentType = res.headers.get('content-type') ?? '';
    if (contentType.includes('text/event-stream')) {
      ac.abort();
      await res.body?.cancel().catch(() => undefined);
      return { status: res.status, contentType, text: '' };
    }
    return { status: res.status, contentType, text: await res.text() };
  } finally {
    clearTimeout(timer);
  }
}

/** What is wrong with a response, or null: a 5xx, or a 4xx that is not exactly `{error, status}`. */
function problemWith(o: Outcome): string | null {
  if (o.status >= 500) return `status ${o.status}: ${o.text.slice(0, 200)}`;
  if (o.status < 400) return null;
  if (!o.contentType.includes('application/json'))
    return `${o.status} with content type ${o.contentType || 'none'}: ${o.text.slice(0, 100)}`;
  let body: unknown;
  try {
    body = JSON.parse(o.text);
  } catch {
    return `${o.status} with a body that is not JSON: ${o.text.slice(0, 100)}`;
  }
  const b = body as Record<string, unknown>;
  const keys = b && typeof b === 'object' ? Object.keys(b).sort().join(',') : typeof body;
  if (keys !== 'error,status' || typeof b['error'] !== 'string' || b['status'] !== o.status)
    return `${o.status} with body ${o.text.slice(0, 200)}`;
  return null;
}

/** One resource of each kind the route table addresses by id, made through the API by the org's admin. */
async function seedResources(app: TestApp, key: string): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  const post = async (path: string, body: unknown) => {
    const r = await send(app, key, {
      label: 'seed',
      method: 'POST',
      path,
      query: '',
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
    });
    assert.ok(r.status === 201 || r.status === 200, `seed ${path}: ${r.status} ${r.text.slice(0, 300)}`);
    return JSON.parse(r.text) as { id: string };
  };
  const get = async (path: string) =>
    JSON.parse((await send(app, key, { label: 'seed', method: 'GET', path, query: '', headers: {} })).text);
  const schemaOf = (method: string, path: string) => app.app.routes.find((r) => r.method === method && r.path === path)!.schema.body!;

  // The built-in simulator: model sync and turns run without a network.
  const provider = await post('/v1/llm-providers', { name: 'fuzz', provider_type: 'llmsim', api_key: 'fuzz-provider-key' });
  ids.set('/v1/llm-providers', provider.id);
  const model = await post(`/v1/llm-providers/${provider.id}/models`, sample(schemaOf('POST', '/v1/llm-providers/:id/models'), ids));
  ids.set('/v1/llm-models', model.id);
  const harness = await post('/v1/harnesses', sample(schemaOf('POST', '/v1/harnesses'), ids));
  ids.set('/v1/harnesses', harness.id);
  // An agent names only the generic harness (what its view shows), not the seeded one.
  const agentBody = sample(schemaOf('POST', '/v1/agents'), ids) as Record<string, unknown>;
  const agent = await post('/v1/agents', { ...agentBody, harness_id: GENERIC_HARNESS_ID });
  ids.set('/v1/agents', agent.id);
  const capabilities: { id: string }[] = (await get('/v1/capabilities')).data;
  ids.set('/v1/capabilities', capabilities[0]!.id);
  const session = await post('/v1/sessions', { harness_id: harness.id, title: 'fuzz', capabilities: capabilities.map((c) => c.id) });
  ids.set('/v1/sessions', session.id);
  const file = await send(app, key, {
    label: 'seed',
    method: 'POST',
    path: `/v1/sessions/${session.id}/fs/fuzz/notes.txt`,
    query: '',
    body: 'hello',
    headers: { 'content-type': 'text/plain' },
  });
  assert.ok(file.status < 300, `seed file: ${file.status} ${file.text}`);
  const image = await send(app, key, {
    label: 'seed',
    method: 'POST',
    path: '/v1/images',
    query: '',
    body: multipartBody(session.id),
    headers: {},
  });
  assert.equal(image.status, 201, `seed image: ${image.text}`);
  ids.set('/v1/images', JSON.parse(image.text).id);
  await post('/v1/user/connections', { provider: 'github', api_key: 'fuzz-connection-key' });
  return ids;
}

test('openapi fuzz - seeded single mutations on every route: no 5xx, every 4xx is {error, status}', { timeout: 240_000 }, async (t) => {
  const app = await startTestApp(t, { mode: 'postgres' });
  const org = await createOrgWithAdmin(app, 'Fuzz Org');
  const ids = await seedResources(app, org.key);
  // Destructive routes act on spares, never on the admin's own user, key or organisation.
  const spareUser = await createUser(app, org.key, 'member');
  ids.set('/v1/users', spareUser.id);
  ids.set('/v1/auth/api-keys', (await createKey(app, (await login(app, spareUser.email, spareUser.password)).access_token, 'spare')).id);
  const spareOrg = await createOrgWithAdmin(app, 'Fuzz Spare Org');
  ids.set('/v1/orgs', spareOrg.orgId);

  await t.test('every numeric path and query parameter has a maximum', () => {
    const unbounded: string[] = [];
    for (const route of app.app.routes) {
      for (const [where, schema] of [
        ['params', route.schema.params],
        ['query', route.schema.query],
      ] as const) {
        for (const [name, prop] of Object.entries(resolve(schema)?.['properties'] ?? {})) {
          const types = [prop, ...((prop as any).anyOf ?? [])].map((p: any) => resolve(p)?.['type']);
          if (types.some((ty) => ty === 'integer' || ty === 'number') && (prop as any).maximum === undefined)
            unbounded.push(`${route.method} ${route.path} ${where}.${name}`);
        }
      }
    }
    assert.deepEqual(unbounded, []);
  });

  await t.test('the hostile inputs the issue names answer 400 {error, status}', async () => {
    const sid = ids.get('/v1/sessions')!;
    const deepResult = '{"tool_results":[{"tool_call_id":"call_1","result":' + deepObject(10_000) + '}]}';
    const cases: FuzzRequest[] = [
      ...['limit=1e309', 'limit=-1', 'limit=1.5', 'limit=NaN', 'offset=99999999999999999999', 'offset=1e309'].map((q) => ({
        label: q,
        method: 'GET',
        path: '/v1/sessions',
        query: q,
        headers: {},
      })),
      ...['limit=1e309', 'limit=Infinity', 'limit=0'].map((q) => ({
        label: q,
        method: 'GET',
        path: `/v1/sessions/${sid}/events`,
        query: q,
        headers: {},
      })),
      {
        label: '10,000-level tool result',
        method: 'POST',
        path: `/v1/sessions/${sid}/tool-results`,
        query: '',
        body: deepResult,
        headers: { 'content-type': 'application/json' },
      },
      {
        label: 'NUL title',
        method: 'PATCH',
        path: `/v1/sessions/${sid}`,
        query: '',
        body: '{"title":"a\\u0000b"}',
        headers: { 'content-type': 'application/json' },
      },
      {
        label: 'lone surrogate title',
        method: 'PATCH',
        path: `/v1/sessions/${sid}`,
        query: '',
        body: '{"title":"a\\ud800b"}',
        headers: { 'content-type': 'application/json' },
      },
      { label: 'NUL in a path parameter', method: 'GET', path: `/v1/sessions/${sid}%00`, query: '', headers: {} },
      { label: 'NUL in a file path', method: 'GET', path: `/v1/sessions/${sid}/fs/a%00.txt`, query: '', headers: {} },
      { label: 'NUL in a query value', method: 'GET', path: '/v1/agents', query: 'tag=a%00', headers: {} },
      ...(
        [
          ['a 10,000-level YAML flow sequence', 'application/yaml', `name: x\nsystem_prompt: y\ntags: ${nest(10_000, '[', ']', '')}\n`],
          // Before the depth check this one aborted the whole process (V8's regexp compiler ran out of stack).
          ['a 10,000-level YAML flow mapping', 'application/yaml', `{"name":"x","system_prompt":"y","metadata":${deepObject(10_000)}}`],
          ['a 10,000-level YAML block sequence', 'application/yaml', `name: x\nsystem_prompt: y\ntags:\n${'- '.repeat(10_000)}x\n`],
          [
            'a 10,000-level JSON definition',
            'application/json',
            `{"name":"x","system_prompt":"y","client_tools":[{"name":"t","description":"d","parameters":${deepObject(10_000)}}]}`,
          ],
          ['NUL in a YAML definition', 'application/yaml', 'name: "x\\0"\nsystem_prompt: y\n'],
          ['a lone surrogate in a YAML definition', 'application/yaml', 'name: "x\\ud800"\nsystem_prompt: y\n'],
          ['NUL in a JSON definition', 'application/json', '{"name":"x\\u0000","system_prompt":"y"}'],
          ['NUL in a Markdown prompt', 'text/markdown', '---\nname: x\n---\nhello \u0000 world'],
        ] as const
      ).map(([label, ct, body]) => ({
        label,
        method: 'POST',
        path: '/v1/agents/import',
        query: '',
        body,
        headers: { 'content-type': ct },
      })),
      {
        label: 'NUL in an image file name',
        method: 'POST',
        path: '/v1/images',
        query: '',
        body: multipartBody(sid, [{ name: 'file', value: PNG, filename: 'a\u0000b.png' }]),
        headers: {},
      },
    ];
    for (const c of cases) {
      const o = await send(app, org.key, c);
      assert.equal(o.status, 400, `${c.label}: ${o.status} ${o.text.slice(0, 200)}`);
      assert.equal(problemWith(o), null, c.label);
      if (c.label.includes('10,000')) assert.match(o.text, /nests deeper than 64 levels/);
      if (c.label.includes('NUL') || c.label.includes('surrogate')) assert.match(o.text, /NUL character or an unpaired surrogate/);
    }
  });

  const random = prng(SEED);
  const routes = [...app.app.routes].sort((a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE'));
  const plan = samplePlan(
    routes.map((route) => ({ route, requests: mutationsFor(route, ids) })),
    BUDGET,
    random,
  );
  t.diagnostic(`seed ${SEED}: ${plan.length} requests over ${routes.length} routes`);
  assert.ok(routes.length >= 40 && plan.length >= 2000, `a real run: ${routes.length} routes, ${plan.length} requests`);

  const started = Date.now();
  const problems: string[] = [];
  const statuses = new Map<number, number>();
  const slowest: { ms: number; what: string }[] = [];
  for (const { route, r } of plan) {
    const key = route.auth === 'operator' ? app.adminKey : org.key;
    let outcome: Outcome;
    const t0 = Date.now();
    try {
      outcome = await send(app, key, r);
    } catch (err) {
      problems.push(`${r.method} ${r.path.slice(0, 80)} [${r.label}]: no answer (${(err as Error).name})`);
      continue;
    }
    statuses.set(outcome.status, (statuses.get(outcome.status) ?? 0) + 1);
    slowest.push({ ms: Date.now() - t0, what: `${route.method} ${route.path} [${r.label}] → ${outcome.status}` });
    const problem = problemWith(outcome);
    if (problem) problems.push(`${route.method} ${route.path} [${r.label}]: ${problem}`);
  }
  const seconds = (Date.now() - started) / 1000;
  t.diagnostic(
    `${plan.length} requests in ${seconds.toFixed(1)} s; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}`,
  );
  for (const s of slowest.sort((a, b) => b.ms - a.ms).slice(0, 3)) t.diagnostic(`slow: ${s.ms} ms ${s.what}`);
  assert.deepEqual(problems.slice(0, 40), [], `${problems.length} bad responses`);
  assert.ok(seconds < 120, `the run took ${seconds} s`);
  assert.ok(
    [...statuses.keys()].some((s) => s >= 200 && s < 300),
    'some mutations were accepted: the base requests are valid',
  );

  const health = await fetch(`${app.url}/health`, { signal: AbortSignal.timeout(2000) });
  assert.equal(health.status, 200, 'the instance is healthy after the run');
  assert.ok(!app.logs.some((l) => l.includes('"unexpected error"')), 'no request was logged as an unexpected error');
});
