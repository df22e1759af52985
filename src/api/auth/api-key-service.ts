import type { InferEntity } from '@mikro-orm/core';
import type { ApiKeyCreateBody, ApiKeyInfoBody } from '../../../schemas/auth.js';
import { assertMayChange, generateApiKey, hashApiKey, type PrincipalCache } from '../../auth/index.js';
import { ForbiddenError, InvalidRequestError } from '../../errors.js';
import type { Principal } from '../../auth/index.js';
import { ApiKey, orgScope, type Store } from '../../db/index.js';

function keyView(k: InferEntity<typeof ApiKey>): ApiKeyInfoBody {
  return {
    id: k.id,
    user_id: k.user_id,
    name: k.name,
    prefix: k.prefix,
    expires_at: k.expires_at?.toISOString() ?? null,
    last_used_at: k.last_used_at?.toISOString() ?? null,
    created_at: k.created_at.toISOString(),
  };
}

/** API keys: everyone manages their own; admins also list and revoke any key of their organisation. */
export function createApiKeyService({ store, principals }: { store: Store; principals: PrincipalCache }) {
  async function list(principal: Principal, scope: 'own' | 'org') {
    if (scope === 'org' && principal.role !== 'admin') throw new ForbiddenError();
    const where = { revoked_at: null, ...(scope === 'own' ? { user_id: principal.user_id } : {}) };
    const rows = await orgScope(store.em(), principal.org_id).find(ApiKey, where, { orderBy: { created_at: 'asc', id: 'asc' } });
    return { data: rows.map(keyView), total: rows.length };
  }

  /** A new key for the caller; the plain key is in this response only (only its SHA-256 is kept). */
  async function create(principal: Principal, body: ApiKeyCreateBody) {
    const expires_at = body.expires_at ? new Date(body.expires_at) : null;
    if (expires_at && expires_at.getTime() <= Date.now())
      throw new InvalidRequestError('Invalid request: body.expires_at must be in the future');
    const { key, prefix } = generateApiKey();
    const em = store.em();
    const row = orgScope(em, principal.org_id).create(ApiKey, {
      user_id: principal.user_id,
      name: body.name,
      prefix,
      key_hash: hashApiKey(key),
      expires_at,
    });
    await em.flush();
    return { ...keyView(row), last_used_at: null, key };
  }

  /** When this answers, the key fails on every instance (the credential cache has been outwaited). */
  async function revoke(principal: Principal, id: string): Promise<void> {
    const em = store.em();
    const key = await orgScope(em, principal.org_id).getOwned(ApiKey, id);
    assertMayChange(principal, key.user_id);
    if (key.revoked_at) return;
    await em.nativeUpdate(ApiKey, { id: key.id, revoked_at: null }, { revoked_at: new Date() });
    await principals.invalidate();
  }

  return { list, create, revoke };
}

export type ApiKeyService = ReturnType<typeof createApiKeyService>;
