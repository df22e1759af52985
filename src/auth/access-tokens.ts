import { SignJWT, jwtVerify, type JWTPayload } from 'jose';
import type { Principal } from './principal.js';
import { isAnyUuid, newId } from '../ids.js';
import type { Store } from '../db/index.js';
import type { TokenVerifier } from './authenticator.js';

const ISSUER = 'agent-session-service';
/** Audience of access tokens (any route) and of stream tokens (one session's SSE only). */
const AUD_API = 'api';
const AUD_SSE = 'sse';

export interface AccessTokenOptions {
  store: Store;
  /** The HS256 key (see loadJwtSecret). */
  key: Uint8Array;
  /** Access token lifetime in seconds (config ACCESS_TOKEN_TTL_S, default 900). */
  accessTtlS: number;
  /** Stream token lifetime in seconds (config STREAM_TOKEN_TTL_S, default 300). */
  streamTtlS: number;
}

interface Claims extends JWTPayload {
  org?: unknown;
  /** Token family (login) of an access token; also on stream tokens minted with one. */
  fam?: unknown;
  /** API key a stream token was minted with. */
  kid?: unknown;
  /** The session a stream token opens. */
  sid?: unknown;
}

interface Holder {
  role: 'admin' | 'member';
  operator: boolean;
  organization_id: string;
  family_ok: boolean;
  key_ok: boolean;
  key_expires_at: Date | string | null;
}

/**
 * HS256 JWTs: access tokens (`aud: api`) and session-scoped stream tokens (`aud: sse`). Every
 * verification also reads the user (role, operator) and checks that the token family and, for a
 * stream token minted with a key, the key are still live, so logout, role changes, user deletion and
 * key revocation apply at once on every instance. One indexed query per request.
 */
export function createAccessTokens({ store, key, accessTtlS, streamTtlS }: AccessTokenOptions) {
  const families = new WeakMap<Principal, string>();

  function sign(claims: Claims, sub: string, aud: string, ttlS: number): { token: Promise<string>; exp: number } {
    const exp = Math.floor(Date.now() / 1000) + ttlS;
    const token = new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(ISSUER)
      .setAudience(aud)
      .setSubject(sub)
      .setIssuedAt()
      .setExpirationTime(exp)
      .setJti(newId())
      .sign(key);
    return { token, exp };
  }

  /**
   * An access token for a user of a token family; `expires_in` is its lifetime in seconds, as
   * issued (read from the clock after signing, a second boundary made it 899 of 900 at times).
   */
  async function issueAccess(user: { id: string; organization_id: string }, familyId: string) {
    const { token } = sign({ org: user.organization_id, fam: familyId }, user.id, AUD_API, accessTtlS);
    return { token: await token, expires_in: accessTtlS };
  }

  /** A token that opens only `sessionId`'s SSE stream, carrying the caller's family or key. */
  async function issueStream(principal: Principal, sessionId: string) {
    const claims: Claims = { org: principal.org_id, sid: sessionId };
    const fam = families.get(principal);
    if (fam) claims.fam = fam;
    if (principal.key_id) claims.kid = principal.key_id;
    const { token, exp } = sign(claims, principal.user_id, AUD_SSE, streamTtlS);
    return { token: await token, expires_at: new Date(exp * 1000).toISOString() };
  }

  const verify: TokenVerifier = async (token) => {
    let payload: Claims;
    try {
      ({ payload } = await jwtVerify<Claims>(token, key, {
        algorithms: ['HS256'],
        issuer: ISSUER,
        audience: [AUD_API, AUD_SSE],
        requiredClaims: ['exp'],
      }));
    } catch {
      return null;
    }
    const stream = payload.aud === AUD_SSE || (Array.isArray(payload.aud) && payload.aud.includes(AUD_SSE));
    const { sub, org, fam, kid, sid } = payload;
    if (!uuid(sub) || !uuid(org) || (fam !== undefined && !uuid(fam)) || (kid !== undefined && !uuid(kid))) return null;
    if (stream ? typeof sid !== 'string' : fam === undefined) return null;
    const holder = await loadHolder(sub, str(fam), str(kid));
    if (!holder || holder.organization_id !== org || !holder.family_ok || !holder.key_ok) return null;
    const principal: Principal = {
      org_id: org,
      user_id: sub,
      role: holder.role,
      operator: holder.operator,
      via: stream ? 'stream_token' : 'access_token',
    };
    if (stream) principal.stream_session_id = sid as string;
    if (typeof kid === 'string') principal.key_id = kid;
    if (typeof fam === 'string') families.set(principal, fam);
    const keyEnd = holder.key_expires_at === null ? Infinity : new Date(holder.key_expires_at).getTime();
    return { principal, validUntil: Math.min(payload.exp! * 1000, keyEnd) };
  };

  async function loadHolder(userId: string, familyId: string | null, keyId: string | null): Promise<Holder | null> {
    const rows = await store.sql<Holder>(
      `select u.role, u.operator, u.organization_id,
         (?::uuid is null or exists (select 1 from token_families f where f.id = ?::uuid and f.user_id = u.id and f.revoked_at is null)) as family_ok,
         (?::uuid is null or exists (select 1 from api_keys k where k.id = ?::uuid and k.user_id = u.id and k.revoked_at is null
            and (k.expires_at is null or k.expires_at > now()))) as key_ok,
         (select k.expires_at from api_keys k where k.id = ?::uuid) as key_expires_at
       from users u where u.id = ?::uuid`,
      [familyId, familyId, keyId, keyId, keyId, userId],
    );
    return rows[0] ?? null;
  }

  /** The token family behind a principal authenticated with an access (or stream) token. */
  function familyOf(principal: Principal): string | undefined {
    return families.get(principal);
  }

  return { issueAccess, issueStream, verify, familyOf };
}

function uuid(v: unknown): v is string {
  return typeof v === 'string' && isAnyUuid(v);
}

function str(v: unknown): string | null {
  return typeof v === 'string' ? v : null;
}

export type AccessTokens = ReturnType<typeof createAccessTokens>;
