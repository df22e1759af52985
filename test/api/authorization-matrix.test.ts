import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import { namedSchemas } from '../../schemas/index.js';
import { MEMBER_OWNERSHIP_RULES } from '../../src/auth/index.js';
import { InvalidRequestError } from '../../src/errors.js';
import { createValidation, type Route } from '../../src/http/index.js';
import { Session } from '../../src/db/index.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { SecretLedger, createKey, createOrgWithAdmin, createUser, login, type OrgAdmin } from './auth/helpers.js';

/**
 * The authorization matrix, generated from the live route table (`app.routes`), so a route added
 * later is covered without touching this file. For every route that needs credentials:
 *  - no credentials, or an unknown key → 401;
 *  - organisation 2's admin on organisation 1's resource → 403 when the path names a real resource
 *    of organisation 1 (400 only when the body we could build is invalid: validation runs before
 *    the handler's ownership check); with a random id → 403/404 on reads (writes may act on the
 *    caller's own namespace, e.g. a PUT upsert); in every case the response carries no data of
 *    organisation 1 and every listed item belongs to organisation 2 (or to nobody: built-ins);
 *  - an organisation 1 member on `admin` routes, and anyone but the operator on `operator` routes → 403;
 *  - the member/admin matrix (docs/decisions/0018-member-admin-matrix.md): an organisation 1 member on every `user`/`stream`
 *    route, addressing the admin's resources, gets 403 exactly where `MEMBER_OWNERSHIP_RULES`
 *    says so (`own_only`: every route of the resource; `change_own`: PATCH, PUT, DELETE) and is
 *    let through everywhere else; on resources the member created, nothing is 403; listings of
 *    `own_only` collections show the member none of the admin's rows.
 */

const validation = createValidation(namedSchemas);
const REQUEST_TIMEOUT_MS = 10_000;

interface Probe {
  status: number;
  text: string;
  contentType: string;
}

/** One request; an SSE response is cut off after its headers. */
async function probe(
  app: TestApp,
  method: string,
  path: string,
  { key, body, raw }: { key?: string; body?: unknown; raw?: string },
): Promise<Probe> {
  const headers: Record<string, string> = {};
  if (key) headers['authorization'] = `Bearer ${key}`;
  let payload: string | undefined;
  if (body !== undefined) (payload = JSON.stringify(body)), (headers['content-type'] = 'application/json');
  if (raw !== undefined) (payload = raw), (headers['content-type'] = 'application/octet-stream');
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), REQUEST_TIMEOUT_MS);
  try {
    const res = await fetch(app.url + path, { method, headers, body: payload, signal: ac.signal });
    const contentType = res.headers.get('content-type') ?? '';
    if (contentType.includes('text/event-stream')) {
      ac.abort();
      await res.body?.cancel().catch(() => undefined);
      return { status: res.status, text: '', contentType };
    }
    return { status: res.status, text: await res.text(), contentType };
  } finally {
    clearTimeout(timer);
  }
}

/** `/v1/sessions/:id/sse` → `/v1/sessions`: the collection whose resource the first param names. */
function collectionOf(route: Route): string | null {
  const segs = route.path.split('/');
  const i = segs.findIndex((s) => s.startsWith(':') || s.startsWith('*'));
  return i > 0 ? segs.slice(0, i).join('/') : null;
}

/** A minimal body for the route's JSON schema, and whether it passes validation. */
function bodyFor(route: Route): { body?: unknown; raw?: string; valid: boolean } {
  const kind = route.bodyKind ?? 'json';
  if (kind === 'raw' || kind === 'multipart') return { raw: 'x', valid: kind === 'raw' };
  if (!route.schema.body) return { valid: true };
  let body: unknown = {};
  try {
    body = Value.Create(route.schema.body, namedSchemas);
  } catch {
    /* formats without defaults: send {} */
  }
  try {
    validation.compileInput(route.schema.body, 'body')(structuredClone(body));
    return { body, valid: true };
  } catch (err) {
    if (err instanceof InvalidRequestError) return { body, valid: false };
    throw err;
  }
}

/** The path with the first param set to `firstId` (others random), and whether the params validate. */
function fillPath(route: Route, firstId: string): { path: string; paramsValid: boolean } {
  let first = true;
  const params: Record<string, string> = {};
  const path = route.path
    .split('/')
    .map((s) => {
      if (!s.startsWith(':') && !s.startsWith('*')) return s;
      const v = s.startsWith('*') ? 'matrix.txt' : first ? firstId : randomUUID();
      first = false;
      params[s.slice(1)] = v;
      return encodeURIComponent(v);
    })
    .join('/');
  if (!route.schema.params) return { path, paramsValid: true };
  try {
    validation.compileInput(route.schema.params, 'params')(params);
    return { path, paramsValid: true };
  } catch (err) {
    if (err instanceof InvalidRequestError) return { path, paramsValid: false };
    throw err;
  }
}

interface Org1 {
  admin: OrgAdmin;
  /** collection path → id of a resource organisation 1's admin created (what the member addresses) */
  adminOwned: Map<string, string>;
  member: { id: string; email: string; key: string; keyId: string };
  /** collection path → id of a real resource of organisation 1 */
  resources: Map<string, string>;
  /** strings that must never appear in a response to organisation 2 */
  markers: string[];
}

async function seedSession(app: TestApp, org1: OrgAdmin): Promise<string> {
  const harnesses = await probe(app, 'GET', '/v1/harnesses', { key: org1.key });
  const harnessId = harnesses.status === 200 ? JSON.parse(harnesses.text).data?.[0]?.id : undefined;
  if (harnessId) {
    const r = await probe(app, 'POST', '/v1/sessions', { key: org1.key, body: { harness_id: harnessId, title: 'matrix' } });
    if (r.status === 201) return JSON.parse(r.text).id;
  }
  const em = app.app.services.store.em();
  const s = em.create(Session, {
    organization_id: org1.orgId,
    user_id: org1.userId,
    harness_id: randomUUID(),
    agent_id: null,
    title: 'matrix',
    tags: [],
    model_id: null,
    capabilities: [],
    features: [],
    status: 'idle',
    current_turn_id: null,
    usage: { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0 },
    chat_user_id: null,
  });
  await em.flush();
  return s.id;
}

/** Finds (or creates through the API) a resource of organisation 1 for each collection addressed by id. */
async function seedOrg1(app: TestApp, secrets: SecretLedger): Promise<Org1> {
  const admin = await createOrgWithAdmin(app, 'Matrix One', secrets);
  const m = await createUser(app, admin.key, 'member', secrets);
  const mk = await createKey(app, (await login(app, m.email, m.password, secrets)).access_token, 'member key', secrets);
  const member = { id: m.id, email: m.email, key: mk.key, keyId: mk.id };
  const resources = new Map<string, string>([
    ['/v1/users', member.id],
    ['/v1/auth/api-keys', member.keyId],
    ['/v1/sessions', await seedSession(app, admin)],
    ['/v1/webhooks', await seedWebhook(app, admin.key)],
  ]);
  type Item = { id?: unknown; organization_id?: unknown } | undefined;
  // Listed items count only when they say they are organisation 1's (built-in rows are shared);
  // an item organisation 1's admin just created is its own unless it says otherwise.
  const listedOwned = (item: Item) => (item && typeof item.id === 'string' && item.organization_id === admin.orgId ? item.id : undefined);
  const createdOwned = (item: Item) =>
    item && typeof item.id === 'string' && (item.organization_id === undefined || item.organization_id === admin.orgId)
      ? item.id
      : undefined;
  for (const route of app.app.routes) {
    const col = collectionOf(route);
    if (!col || resources.has(col) || route.auth === 'none') continue;
    const create = app.app.routes.find((r) => r.method === 'POST' && r.path === col);
    let id: string | undefined;
    if (create) {
      const { body, raw } = bodyFor(create);
      const r = await probe(app, 'POST', col, { key: admin.key, body, raw });
      if (r.status >= 200 && r.status < 300 && r.contentType.includes('json')) id = createdOwned(JSON.parse(r.text));
    }
    if (!id) {
      const list = await probe(app, 'GET', col, { key: admin.key });
      if (list.status === 200 && list.contentType.includes('json')) id = (JSON.parse(list.text).data ?? []).map(listedOwned).find(Boolean);
    }
    if (id) resources.set(col, id);
  }
  const image = await seedImage(app, admin.key, resources.get('/v1/sessions')!);
  resources.set('/v1/images', image);
  const adminOwned = new Map([...resources, ['/v1/users', admin.userId], ['/v1/auth/api-keys', admin.keyId]]);
  const markers = [
    admin.orgId,
    admin.userId,
    admin.email,
    member.id,
    member.email,
    member.keyId,
    admin.keyId,
    'Matrix One',
    ...resources.values(),
  ];
  return { admin, adminOwned, member, resources, markers };
}

/** A webhook endpoint of organisation 1 (a public literal address: creating it connects nowhere). */
async function seedWebhook(app: TestApp, key: string): Promise<string> {
  const r = await probe(app, 'POST', '/v1/webhooks', {
    key,
    body: { url: 'https://93.184.215.14/matrix', event_types: ['turn.completed'] },
  });
  assert.equal(r.status, 201, r.text);
  return JSON.parse(r.text).endpoint.id;
}

/** A 1×1 PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

async function seedImage(app: TestApp, key: string, sessionId: string): Promise<string> {
  const form = new FormData();
  form.append('session_id', sessionId);
  form.append('file', new Blob([PNG], { type: 'image/png' }), 'matrix.png');
  const res = await fetch(`${app.url}/v1/images`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
  assert.equal(res.status, 201, await res.clone().text());
  return ((await res.json()) as { id: string }).id;
}

/** The ownership rule of the resource a route addresses (by its collection), if any. */
function ownershipOf(route: Route): { col: string; rule: (typeof MEMBER_OWNERSHIP_RULES)[string] } | null {
  const col = collectionOf(route);
  const rule = col ? MEMBER_OWNERSHIP_RULES[col] : undefined;
  return col && rule ? { col, rule } : null;
}

/** What the matrix says a member gets on a route addressing a resource the organisation's admin created. */
function memberExpectation(route: Route): 'forbidden' | 'allowed' {
  if (route.auth === 'admin' || route.auth === 'operator') return 'forbidden';
  const owned = ownershipOf(route);
  if (!owned) return 'allowed';
  if (owned.rule === 'own_only') return 'forbidden';
  return ['PATCH', 'PUT', 'DELETE'].includes(route.method) ? 'forbidden' : 'allowed';
}

/** Routes that end the resource they address run last, so the others still find it. */
const endsResource = (r: Route) => r.method === 'DELETE' && /^\/v1\/[a-z-]+\/:id$/.test(r.path);

/** An agent, a session (with an image) and an API key organisation 1's member created, by collection. */
async function seedMemberOwned(app: TestApp, org1: Org1): Promise<Map<string, string>> {
  const key = org1.member.key;
  const agent = await probe(app, 'POST', '/v1/agents', { key, body: { name: 'member agent', system_prompt: 'x' } });
  assert.equal(agent.status, 201, agent.text);
  const harnesses = JSON.parse((await probe(app, 'GET', '/v1/harnesses', { key })).text).data;
  const session = await probe(app, 'POST', '/v1/sessions', { key, body: { harness_id: harnesses[0].id, title: 'member session' } });
  assert.equal(session.status, 201, session.text);
  const sessionId = JSON.parse(session.text).id as string;
  const apiKey = await probe(app, 'POST', '/v1/auth/api-keys', { key, body: { name: 'spare' } });
  assert.equal(apiKey.status, 201, apiKey.text);
  return new Map([
    ['/v1/agents', JSON.parse(agent.text).id],
    ['/v1/sessions', sessionId],
    ['/v1/images', await seedImage(app, key, sessionId)],
    ['/v1/auth/api-keys', JSON.parse(apiKey.text).id],
  ]);
}

/**
 * Routes whose auth mode the matrix in docs/decisions/0018-member-admin-matrix.md names explicitly (beyond what
 * `MEMBER_OWNERSHIP_RULES` covers); the generated checks below then hold them to it.
 */
const PINNED_AUTH: Record<string, Route['auth']> = {
  // Deployment-wide task counts of every organisation: the operator only (docs/decisions/0018-member-admin-matrix.md).
  'GET /v1/durable/metrics/timeseries': 'operator',
  // Webhooks carry every session's events of the organisation: admins only, reads included (docs/decisions/0018).
  'GET /v1/webhooks': 'admin',
  'POST /v1/webhooks': 'admin',
  'GET /v1/webhooks/:id': 'admin',
  'PATCH /v1/webhooks/:id': 'admin',
  'DELETE /v1/webhooks/:id': 'admin',
  'POST /v1/webhooks/:id/rotate-secret': 'admin',
  'POST /v1/webhooks/:id/test': 'admin',
  'GET /v1/webhooks/:id/deliveries': 'admin',
  'GET /v1/webhooks/:id/deliveries/:delivery_id': 'admin',
  'POST /v1/webhooks/:id/deliveries/:delivery_id/redeliver': 'admin',
};

test('authorization matrix - every credentialed route in app.routes', async (t) => {
  const secrets = new SecretLedger();
  const app = await startTestApp(t, { mode: 'postgres' });
  secrets.add(app.adminKey);
  const org1 = await seedOrg1(app, secrets);
  const org2 = await createOrgWithAdmin(app, 'Matrix Two', secrets);
  const routes = app.app.routes.filter((r) => r.auth !== 'none');
  for (const [name, auth] of Object.entries(PINNED_AUTH)) {
    assert.equal(routes.find((r) => `${r.method} ${r.path}` === name)?.auth, auth, `${name} is in the route table with auth ${auth}`);
  }
  assert.ok(routes.length >= 15, `the route table has ${routes.length} credentialed routes`);
  const realIdRoutes = routes.filter((r) => {
    const c = collectionOf(r);
    return c && org1.resources.has(c);
  });
  t.diagnostic(
    `${routes.length} credentialed routes; ${realIdRoutes.length} addressed with a real organisation-1 id (${[...org1.resources.keys()].join(', ')})`,
  );

  for (const route of routes) {
    const name = `${route.method} ${route.path} (${route.auth})`;
    const col = collectionOf(route);
    const realId = col ? org1.resources.get(col) : undefined;
    const { path, paramsValid } = fillPath(route, realId ?? randomUUID());
    const { body, raw, valid: bodyValid } = bodyFor(route);

    await t.test(`${name} - 401 without credentials or with an unknown key`, async () => {
      for (const key of [undefined, 'ask_not-a-real-key-0123456789abcdef']) {
        const r = await probe(app, route.method, path, { key, body, raw });
        assert.equal(r.status, 401, `${key ? 'unknown key' : 'no credentials'}: ${r.status} ${r.text}`);
        assert.equal(r.text, '{"error":"Unauthorized","status":401}');
      }
    });

    await t.test(`${name} - organisation 2's admin gets no data of organisation 1`, async () => {
      const r = await probe(app, route.method, path, { key: org2.key, body, raw });
      for (const m of org1.markers)
        assert.ok(!r.text.includes(m), `response ${r.status} leaks an organisation-1 value: ${r.text.slice(0, 200)}`);
      const otherParams = (route.path.match(/[:*]/g) ?? []).length > 1;
      // Validation runs before the handler's ownership check: 400 is acceptable only when the
      // params or body we could build are invalid for the route.
      const valid = bodyValid && paramsValid;
      if (realId) {
        const allowed = valid && !otherParams ? [403] : [400, 403];
        assert.ok(
          allowed.includes(r.status),
          `real organisation-1 id: expected ${allowed.join('/')}, got ${r.status} ${r.text.slice(0, 200)}`,
        );
      } else if (col) {
        // No organisation-1 resource of this kind: reads must find nothing; writes may act on
        // the caller's own namespace (PUT upserts, per-user keys) as long as no org-1 data shows.
        const ownWrite = route.method !== 'GET' && r.status >= 200 && r.status < 300;
        const allowed = valid ? [403, 404] : [400, 403, 404];
        assert.ok(
          ownWrite || allowed.includes(r.status),
          `random id: expected ${allowed.join('/')}, got ${r.status} ${r.text.slice(0, 200)}`,
        );
      }
      if (r.status === 200 && r.contentType.includes('json')) {
        const parsed = JSON.parse(r.text);
        const items: unknown[] = Array.isArray(parsed?.data) ? parsed.data : [parsed];
        for (const item of items) {
          const org = (item as { organization_id?: unknown } | null)?.organization_id;
          assert.ok(org === undefined || org === null || org === org2.orgId, 'every item belongs to organisation 2 (or to nobody)');
        }
      }
    });

    if (route.auth === 'admin' || route.auth === 'operator') {
      await t.test(`${name} - 403 for an organisation-1 member${route.auth === 'operator' ? ' and admin' : ''}`, async () => {
        const keys = route.auth === 'operator' ? [org1.member.key, org1.admin.key] : [org1.member.key];
        for (const key of keys) {
          const r = await probe(app, route.method, path, { key, body, raw });
          assert.equal(r.text, '{"error":"Forbidden","status":403}');
        }
      });
    }

    await t.test(
      `${name} - organisation-1 member on the admin's resources: ${memberExpectation(route)} by the member/admin matrix`,
      async () => {
        const adminId = col ? org1.adminOwned.get(col) : undefined;
        // The target's own params decide (its other params are random again: a name may not validate).
        const target = adminId ? fillPath(route, adminId) : { path, paramsValid };
        const r = await probe(app, route.method, target.path, { key: org1.member.key, body, raw });
        if (
          memberExpectation(route) === 'forbidden' &&
          ((route.auth !== 'user' && route.auth !== 'stream') || (bodyValid && target.paramsValid))
        ) {
          assert.equal(r.text, '{"error":"Forbidden","status":403}', `${r.status} ${r.text.slice(0, 200)}`);
        } else if (memberExpectation(route) === 'forbidden') {
          // Roles are checked before validation, ownership after it (in the service): an invalid body may be 400 first.
          assert.ok([400, 403].includes(r.status), `expected 400/403, got ${r.status} ${r.text.slice(0, 200)}`);
        } else {
          assert.ok(r.status !== 403 && r.status !== 401 && r.status < 500, `allowed for members, got ${r.status} ${r.text.slice(0, 200)}`);
        }
        const owned = route.method === 'GET' && !col ? MEMBER_OWNERSHIP_RULES[route.path] : undefined;
        if (owned === 'own_only') {
          assert.equal(r.status, 200, r.text);
          const adminRow = org1.adminOwned.get(route.path)!;
          assert.ok(!r.text.includes(adminRow), `the listing shows the member the admin's ${route.path} row`);
        }
      },
    );
  }

  await t.test("the member/admin matrix: a member's own agents, sessions and images - nothing is 403", async (tt) => {
    const own = await seedMemberOwned(app, org1);
    const ownRoutes = routes.filter((r) => (r.auth === 'user' || r.auth === 'stream') && ownershipOf(r) && own.has(ownershipOf(r)!.col));
    assert.ok(ownRoutes.length >= 20, `${ownRoutes.length} routes address a member's own resources`);
    for (const route of [...ownRoutes.filter((r) => !endsResource(r)), ...ownRoutes.filter(endsResource)]) {
      const { path } = fillPath(route, own.get(ownershipOf(route)!.col)!);
      const { body, raw } = bodyFor(route);
      await tt.test(`${route.method} ${route.path}`, async () => {
        const r = await probe(app, route.method, path, { key: org1.member.key, body, raw });
        assert.ok(r.status !== 403 && r.status !== 401 && r.status < 500, `${r.status} ${r.text.slice(0, 200)}`);
      });
    }
    // And the admin reaches what the member created (admins manage the whole organisation).
    for (const [col, id] of own) {
      if (col === '/v1/sessions' || col === '/v1/images') continue; // the member's DELETE ran last
      const get = routes.find((r) => r.method === 'GET' && r.path === `${col}/:id`);
      if (get) assert.equal((await probe(app, 'GET', `${col}/${id}`, { key: org1.admin.key })).status, 200, col);
    }
  });

  await t.test("organisation 1's resources survived organisation 2's writes and deletes", async () => {
    for (const [col, id] of org1.resources) {
      const get = app.app.routes.find((r) => r.method === 'GET' && r.path === `${col}/:id`);
      if (!get) continue;
      assert.equal((await probe(app, 'GET', `${col}/${id}`, { key: org1.admin.key })).status, 200, col);
    }
    assert.equal((await probe(app, 'GET', '/v1/auth/me', { key: org1.member.key })).status, 200, "the member's key is not revoked");
  });

  await t.test('logs - no key, token or password used in the matrix appears', () => {
    secrets.assertAbsentFrom(app.logs);
  });
});
