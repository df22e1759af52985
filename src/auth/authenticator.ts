import { UnauthorizedError } from '../errors.js';
import type { Authenticate, Exchange } from '../http/index.js';
import type { Principal } from './principal.js';
import { parseQuery } from '../http/index.js';
import { preparedSql, type Store } from '../db/index.js';
import { hashApiKey } from './api-key.js';
import { looksLikeJwt, parseAuthorization } from './credentials.js';
import type { PrincipalCache, Verified } from './principal-cache.js';

/** Verifies a token of one kind; returns null when the token is not of its kind or not valid. */
export type TokenVerifier = (token: string) => Promise<Verified | null>;

/** How often last_used_at is written for a busy key, in seconds. */
const LAST_USED_WRITE_INTERVAL_S = 60;

export interface AuthenticatorDeps {
  store: Store;
  /** Verifies JWT access and stream tokens (the auth module adds it); absent → JWTs are refused. */
  verifyJwt?: TokenVerifier;
  /** Reuses recent checks; see principal-cache.ts for why revocation stays immediate. */
  cache?: PrincipalCache;
}

/** Resolves the caller from `Authorization` (or `?access_token=` on SSE routes); 401 otherwise. */
export function createAuthenticator({ store, verifyJwt, cache }: AuthenticatorDeps): Authenticate {
  const verifyApiKey = createApiKeyVerifier(store);
  return async function authenticate(ex: Exchange, { allowQueryToken }): Promise<Principal> {
    let token = parseAuthorization(ex.headers['authorization']);
    if (!token && allowQueryToken) {
      const q = parseQuery(ex.rawQuery)['access_token'];
      token = typeof q === 'string' && q ? q : null;
    }
    if (!token) throw new UnauthorizedError();
    const key = cache?.keyOf(token);
    const hit = key === undefined ? undefined : cache!.get(key);
    if (hit) return hit;
    const verify = async () => (looksLikeJwt(token) ? verifyJwt?.(token) : verifyApiKey(token));
    const verified = key === undefined ? await verify() : await cache!.verifyOnce(key, verify);
    if (!verified) throw new UnauthorizedError();
    return verified.principal;
  };
}

interface KeyRow {
  id: string;
  organization_id: string;
  user_id: string;
  role: 'admin' | 'member';
  operator: boolean;
  expires_at: Date | string | null;
  touch: boolean;
}

/** Runs on every principal-cache miss: prepared on each connection (prepared-sql.ts). */
const VERIFY_API_KEY = preparedSql(
  'api-keys.verify',
  `select k.id, k.organization_id, u.id as user_id, u.role, u.operator, k.expires_at,
     (k.last_used_at is null or k.last_used_at < now() - make_interval(secs => ?::double precision)) as touch
   from api_keys k join users u on u.id = k.user_id and u.organization_id = k.organization_id
   where k.key_hash = ? and k.revoked_at is null and (k.expires_at is null or k.expires_at > now())`,
);

/**
 * API keys: one indexed query (SHA-256 lookup joined with the user) checks existence, expiry and
 * revocation; the authenticator's cache decides how often it runs (docs/decisions/0015-credential-check-cache.md).
 */
export function createApiKeyVerifier(store: Store): TokenVerifier {
  return async function verifyApiKey(token) {
    const rows = await store.sql<KeyRow>(VERIFY_API_KEY, [LAST_USED_WRITE_INTERVAL_S, hashApiKey(token)]);
    const key = rows[0];
    if (!key) return null;
    if (key.touch) await store.sql('update api_keys set last_used_at = now() where id = ?', [key.id]);
    return {
      principal: {
        org_id: key.organization_id,
        user_id: key.user_id,
        role: key.role,
        operator: key.operator,
        via: 'api_key',
        key_id: key.id,
      },
      validUntil: key.expires_at === null ? null : new Date(key.expires_at).getTime(),
    };
  };
}
