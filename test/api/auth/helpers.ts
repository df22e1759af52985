import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { request, type TestApp } from '../../helpers/app.js';

/** Every credential a test file used; the captured logs must contain none of them. */
export class SecretLedger {
  readonly values = new Set<string>();
  add<T extends string | undefined>(value: T): T {
    if (value && value.length >= 8) this.values.add(value);
    return value;
  }
  /** Fails naming the kind (not the value) of anything found in the log lines. */
  assertAbsentFrom(logs: string[]): void {
    assert.ok(this.values.size > 0, 'the ledger recorded secrets');
    const text = logs.join('');
    assert.ok(text.length > 0, 'logs were captured');
    for (const v of this.values) {
      assert.ok(!text.includes(v), `a secret (${v.slice(0, 4)}…, ${v.length} chars) appears in the logs`);
    }
  }
}

export interface OrgAdmin {
  orgId: string;
  userId: string;
  email: string;
  password: string;
  /** An API key of this admin (created through the API after a login). */
  key: string;
  keyId: string;
}

export function uniqueEmail(label: string): string {
  return `${label}-${randomBytes(4).toString('hex')}@example.test`;
}

export function newPassword(): string {
  return `pw-${randomBytes(9).toString('base64url')}`;
}

/** POST /v1/auth/login; asserts 200 and returns the token pair. */
export async function login(app: TestApp, email: string, password: string, secrets?: SecretLedger) {
  const r = await request(app.url, 'POST', '/v1/auth/login', { key: null, body: { email, password } });
  assert.equal(r.status, 200, `login ${r.status} ${r.text}`);
  secrets?.add(r.body.access_token);
  secrets?.add(r.body.refresh_token);
  return r.body as { access_token: string; refresh_token: string; token_type: string; expires_in: number };
}

/** POST /v1/auth/api-keys with the given credential; returns the plain key and its id. */
export async function createKey(app: TestApp, credential: string, name = 'test key', secrets?: SecretLedger) {
  const r = await request(app.url, 'POST', '/v1/auth/api-keys', { key: credential, body: { name } });
  assert.equal(r.status, 201, `create key ${r.status} ${r.text}`);
  secrets?.add(r.body.key);
  return { key: r.body.key as string, id: r.body.id as string };
}

/** The operator creates an organisation with an admin, who logs in and makes an API key. */
export async function createOrgWithAdmin(app: TestApp, name: string, secrets?: SecretLedger): Promise<OrgAdmin> {
  const email = uniqueEmail(name.toLowerCase().replace(/\W+/g, '-'));
  const password = secrets ? secrets.add(newPassword()) : newPassword();
  const r = await app.request('POST', '/v1/orgs', { body: { name, admin: { email, name: `${name} admin`, password } } });
  assert.equal(r.status, 201, `create org ${r.status} ${r.text}`);
  const tokens = await login(app, email, password, secrets);
  const key = await createKey(app, tokens.access_token, `${name} admin key`, secrets);
  return { orgId: r.body.organization.id, userId: r.body.admin.id, email, password, key: key.key, keyId: key.id };
}

/** An admin creates a user in their organisation; returns its id and password. */
export async function createUser(app: TestApp, adminCredential: string, role: 'admin' | 'member', secrets?: SecretLedger) {
  const email = uniqueEmail(role);
  const password = secrets ? secrets.add(newPassword()) : newPassword();
  const r = await request(app.url, 'POST', '/v1/users', { key: adminCredential, body: { email, name: `A ${role}`, password, role } });
  assert.equal(r.status, 201, `create user ${r.status} ${r.text}`);
  return { id: r.body.id as string, email, password };
}
