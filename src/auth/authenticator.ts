import { UnauthorizedError } from '../errors.js';
import type { Authenticate, Exchange } from '../http/pipeline.js';
import type { Principal } from '../http/route.js';
import { parseQuery } from '../http/pipeline.js';
import type { Store } from '../store/index.js';
import { ApiKey, User } from '../store/index.js';
import { hashApiKey } from './api-key.js';
import { looksLikeJwt, parseAuthorization } from './credentials.js';

/** Verifies a token of one kind; returns null when the token is not of its kind. */
export type TokenVerifier = (token: string) => Promise<Principal | null>;

/** How often last_used_at is written for a busy key, in ms. */
const LAST_USED_WRITE_INTERVAL_MS = 60_000;

export interface AuthenticatorDeps {
  store: Store;
  /** Verifies JWT access and stream tokens (the auth module adds it); absent → JWTs are refused. */
  verifyJwt?: TokenVerifier;
}

/** Resolves the caller from `Authorization` (or `?access_token=` on SSE routes); 401 otherwise. */
export function createAuthenticator({ store, verifyJwt }: AuthenticatorDeps): Authenticate {
  const verifyApiKey = createApiKeyVerifier(store);
  return async function authenticate(ex: Exchange, { allowQueryToken }): Promise<Principal> {
    let token = parseAuthorization(ex.headers['authorization']);
    if (!token && allowQueryToken) {
      const q = parseQuery(ex.rawQuery)['access_token'];
      token = typeof q === 'string' && q ? q : null;
    }
    if (!token) throw new UnauthorizedError();
    const principal = looksLikeJwt(token) ? await verifyJwt?.(token) : await verifyApiKey(token);
    if (!principal) throw new UnauthorizedError();
    return principal;
  };
}

/** API keys: SHA-256 lookup, expiry and revocation checked on every request (no cache). */
export function createApiKeyVerifier(store: Store): TokenVerifier {
  return async function verifyApiKey(token) {
    const em = store.em();
    const key = await em.findOne(ApiKey, { key_hash: hashApiKey(token) });
    const now = Date.now();
    if (!key || key.revoked_at || (key.expires_at && key.expires_at.getTime() <= now)) return null;
    const user = await em.findOne(User, { id: key.user_id });
    if (!user || user.organization_id !== key.organization_id) return null;
    if (!key.last_used_at || now - key.last_used_at.getTime() > LAST_USED_WRITE_INTERVAL_MS) {
      await em.nativeUpdate(ApiKey, { id: key.id }, { last_used_at: new Date(now) });
    }
    return { org_id: key.organization_id, user_id: user.id, role: user.role, operator: user.operator, via: 'api_key', key_id: key.id };
  };
}
