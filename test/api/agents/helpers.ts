import { after, before } from 'node:test';
import { hashApiKey } from '../../../src/auth/index.js';
import { ApiKey, Organization, User } from '../../../src/db/index.js';
import { uuidv7 } from 'uuidv7';
import { newToken } from '../../../src/ids.js';
import { startTestApp, type TestApp, type TestMode } from '../../helpers/app.js';
import { request, type RequestOptions, type TestResponse } from '../../helpers/http.js';

/** One app per describe block: booted in `before`, torn down in `after`. */
export function useSuiteApp(mode: TestMode = 'postgres'): () => TestApp {
  let app: TestApp | undefined;
  const cleanups: (() => unknown)[] = [];
  before(async () => {
    app = await startTestApp({ after: (fn: () => unknown) => void cleanups.push(fn) }, { mode });
  });
  after(async () => {
    for (const fn of cleanups.reverse()) await fn();
  });
  return () => app!;
}

export interface Caller {
  key: string;
  orgId: string;
  request(method: string, path: string, opts?: RequestOptions): Promise<TestResponse>;
}

/**
 * A user with an API key, written straight to the store: in a new organisation, or in the
 * bootstrap admin's (`orgId`), with the given role.
 */
export async function addCaller(
  app: TestApp,
  { role = 'member', orgId }: { role?: 'admin' | 'member'; orgId?: string } = {},
): Promise<Caller> {
  const em = app.app.services.store.em();
  // No ORM relations between these rows: flush in foreign-key order.
  const org = orgId ?? em.create(Organization, { name: `org-${newToken('', 4)}`, default_model_id: null }).id;
  await em.flush();
  const user = em.create(User, {
    organization_id: org,
    email: `${newToken('u', 6)}@test.invalid`,
    name: 'Test',
    role,
    operator: false,
    password_hash: null,
  });
  await em.flush();
  const key = newToken('ask_', 24);
  em.create(ApiKey, {
    organization_id: org,
    user_id: user.id,
    name: 'test',
    prefix: key.slice(0, 12),
    key_hash: hashApiKey(key),
    expires_at: null,
    last_used_at: null,
    revoked_at: null,
  });
  await em.flush();
  return { key, orgId: org, request: (method, path, opts = {}) => request(app.url, method, path, { key, ...opts }) };
}

/** The bootstrap admin's organisation id. */
export async function adminOrgId(app: TestApp): Promise<string> {
  const [row] = await app.app.services.store.sql<{ organization_id: string }>(
    'select organization_id from users where operator = true limit 1',
  );
  return row!.organization_id;
}

/** A minimal valid agent body. */
export function agentBody(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { name: 'Support', system_prompt: 'You help customers.', ...extra };
}

/** An LLM provider with one model in the organisation, written straight to the store; returns the model id. */
export async function addModel(app: TestApp, orgId: string): Promise<string> {
  const { store } = app.app.services;
  const providerId = uuidv7();
  const modelId = uuidv7();
  await store.sql(
    `insert into llm_providers (id, organization_id, name, provider_type, api_key_encrypted, created_at, updated_at) values (?, ?, 'test', 'llmsim', 'x', now(), now())`,
    [providerId, orgId],
  );
  await store.sql(
    `insert into llm_models (id, organization_id, provider_id, model_id, display_name, source, status, created_at, updated_at) values (?, ?, ?, 'sim-1', 'Sim 1', 'manual', 'active', now(), now())`,
    [modelId, orgId, providerId],
  );
  return modelId;
}
