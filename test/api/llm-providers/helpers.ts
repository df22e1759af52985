import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before } from 'node:test';
import type { AppOptions } from '../../../src/app.js';
import { startTestApp, type TestApp, type TestMode } from '../../helpers/app.js';
import { request, type RequestOptions, type TestResponse } from '../../helpers/http.js';

export interface SuiteAppOptions {
  mode?: TestMode;
  env?: Record<string, unknown>;
  appOptions?: Omit<AppOptions, 'logDestination'>;
}

/**
 * One app per describe block: booted in `before`, torn down in `after`. Options may be a
 * function, read when the app boots (after earlier `before` hooks, e.g. fake vendor servers).
 */
export function useSuiteApp(options: SuiteAppOptions | (() => SuiteAppOptions) = {}): () => TestApp {
  let app: TestApp | undefined;
  const cleanups: (() => unknown)[] = [];
  before(async () => {
    const opts = typeof options === 'function' ? options() : options;
    app = await startTestApp(
      { after: (fn: () => unknown) => void cleanups.push(fn) },
      { mode: opts.mode ?? 'postgres', env: opts.env, appOptions: opts.appOptions },
    );
  });
  after(async () => {
    for (const fn of cleanups.reverse()) await fn();
  });
  return () => app!;
}

/** Records every response body, so a test can check a secret never came back. */
export class ResponseLedger {
  readonly texts: string[] = [];
  record(r: TestResponse): TestResponse {
    this.texts.push(r.text, JSON.stringify([...r.headers.entries()]));
    return r;
  }
  assertAbsent(secret: string): void {
    assert.ok(this.texts.length > 0, 'responses were recorded');
    for (const t of this.texts) assert.ok(!t.includes(secret), 'a response contains the provider key');
  }
}

export interface Caller {
  key: string;
  userId: string;
  request(method: string, path: string, opts?: RequestOptions): Promise<TestResponse>;
}

/** A user of the admin's organisation, created through `POST /v1/users`, with an API key of its own. */
export async function createCaller(app: TestApp, role: 'admin' | 'member'): Promise<Caller> {
  const email = `${role}-${randomBytes(4).toString('hex')}@example.test`;
  const password = `pw-${randomBytes(9).toString('base64url')}`;
  const user = await app.request('POST', '/v1/users', { body: { email, name: `A ${role}`, password, role } });
  assert.equal(user.status, 201, user.text);
  const login = await request(app.url, 'POST', '/v1/auth/login', { key: null, body: { email, password } });
  assert.equal(login.status, 200, login.text);
  const created = await request(app.url, 'POST', '/v1/auth/api-keys', { key: login.body.access_token, body: { name: `${role} key` } });
  assert.equal(created.status, 201, created.text);
  const key = created.body.key as string;
  return { key, userId: user.body.id, request: (method, path, o = {}) => request(app.url, method, path, { key, ...o }) };
}

/** An admin of a new organisation (through `POST /v1/orgs`), with an API key. */
export async function createOtherOrg(app: TestApp): Promise<Caller & { orgId: string }> {
  const email = `other-${randomBytes(4).toString('hex')}@example.test`;
  const password = `pw-${randomBytes(9).toString('base64url')}`;
  const org = await app.request('POST', '/v1/orgs', { body: { name: 'Other', admin: { email, name: 'Other admin', password } } });
  assert.equal(org.status, 201, org.text);
  const login = await request(app.url, 'POST', '/v1/auth/login', { key: null, body: { email, password } });
  assert.equal(login.status, 200, login.text);
  const created = await request(app.url, 'POST', '/v1/auth/api-keys', { key: login.body.access_token, body: { name: 'other key' } });
  assert.equal(created.status, 201, created.text);
  const key = created.body.key as string;
  return {
    key,
    userId: org.body.admin.id,
    orgId: org.body.organization.id,
    request: (method, path, o = {}) => request(app.url, method, path, { key, ...o }),
  };
}

/** The bootstrap admin's organisation id. */
export async function adminOrgId(app: TestApp): Promise<string> {
  const [row] = await app.app.services.store.sql<{ organization_id: string }>(
    'select organization_id from users where operator = true limit 1',
  );
  return row!.organization_id;
}

/** A fresh, recognisable fake vendor key. */
export function fakeVendorKey(label = 'sk'): string {
  return `${label}-${randomBytes(18).toString('hex')}`;
}

/** POST /v1/llm-providers as the admin; asserts 201. */
export async function createProvider(
  app: TestApp,
  body: Record<string, unknown> = {},
  ledger?: ResponseLedger,
): Promise<Record<string, any>> {
  const r = await app.request('POST', '/v1/llm-providers', {
    body: { name: 'P', provider_type: 'llmsim', api_key: fakeVendorKey(), ...body },
  });
  ledger?.record(r);
  assert.equal(r.status, 201, r.text);
  return r.body;
}

/** POST /v1/llm-providers/{id}/models as the admin; asserts 201. */
export async function addModel(app: TestApp, providerId: string, body: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const r = await app.request('POST', `/v1/llm-providers/${providerId}/models`, {
    body: { model_id: `m-${randomBytes(3).toString('hex')}`, ...body },
  });
  assert.equal(r.status, 201, r.text);
  return r.body;
}
