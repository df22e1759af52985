import type { LoginBody, TokenPairBody } from '../../../schemas/auth.js';
import { assertSessionAccess, type AuthModule } from '../../auth/index.js';
import { TooManyRequestsError, UnauthorizedError } from '../../errors.js';
import type { Principal } from '../../auth/index.js';
import type { Logger } from '../../log.js';
import { Session, User, type Organization, type Store } from '../../db/index.js';
import type { InferEntity } from '@mikro-orm/core';
import { orgView } from '../orgs/index.js';
import { normalizeEmail, userView, type UserRow } from '../users/index.js';

type OrgRow = InferEntity<typeof Organization>;

interface MeRow {
  id: string;
  organization_id: string;
  email: string;
  name: string;
  role: 'admin' | 'member';
  operator: boolean;
  created_at: Date | string;
  updated_at: Date | string;
  org_name: string;
  org_created_at: Date | string;
  org_updated_at: Date | string;
}

export interface AuthServiceDeps {
  store: Store;
  auth: AuthModule;
}

/** Login, refresh, logout, the caller's identity and session stream tokens. */
export function createAuthService({ store, auth }: AuthServiceDeps) {
  async function pair(user: { id: string; organization_id: string }, familyId: string, refreshToken: string): Promise<TokenPairBody> {
    const access = await auth.tokens.issueAccess(user, familyId);
    return { access_token: access.token, refresh_token: refreshToken, token_type: 'Bearer', expires_in: access.expires_in };
  }

  /**
   * Email + password → a token pair. Unknown email and wrong password answer the same 401 after
   * the same work (one user lookup, one scrypt); throttled per email and per IP first.
   */
  async function login({ email, password }: LoginBody, { ip, log }: { ip: string; log: Logger }): Promise<TokenPairBody> {
    const normalized = normalizeEmail(email);
    const attempt = auth.throttle.attempt(normalized, ip);
    const em = store.em();
    const user = await em.findOne(User, { email: normalized });
    const ok = await auth.passwords.verify(user?.password_hash, password).catch((err: unknown) => {
      // Refused before any password was checked (the hash queue is full): it was no guess.
      if (err instanceof TooManyRequestsError) attempt.release();
      throw err;
    });
    if (!ok || !user) {
      log.info({ event: 'login_failed' }, 'login failed');
      throw new UnauthorizedError();
    }
    attempt.succeeded();
    await rehashIfNeeded(user, password);
    const { token, familyId } = await auth.refreshTokens.start(user);
    return pair(user, familyId, token);
  }

  async function rehashIfNeeded(user: UserRow, password: string): Promise<void> {
    if (!user.password_hash || !auth.passwords.needsRehash(user.password_hash)) return;
    await store.em().nativeUpdate(User, { id: user.id }, { password_hash: await auth.passwords.hash(password) });
  }

  /**
   * A used refresh token for its successor; a token presented twice revokes its family. Throttled
   * per client IP like a login: only failures count (a success gives its attempt back).
   */
  async function refresh(refreshToken: string, { ip, log }: { ip: string; log: Logger }): Promise<TokenPairBody> {
    const attempt = auth.throttle.attemptRefresh(ip);
    const r = await auth.refreshTokens.rotate(refreshToken);
    if (!r.ok) {
      if (r.reason === 'reused') {
        log.warn({ event: 'refresh_token_reuse' }, 'rotated refresh token presented again: token family revoked');
        await auth.principals.invalidate();
      }
      throw new UnauthorizedError();
    }
    const user = await store.em().findOne(User, { id: r.userId });
    if (!user) throw new UnauthorizedError();
    attempt.succeeded();
    return pair(user, r.familyId, r.token);
  }

  /** Ends the login behind an access token: its refresh family and every access token of it. */
  async function logout(principal: Principal): Promise<void> {
    const familyId = auth.tokens.familyOf(principal);
    if (familyId && (await auth.refreshTokens.revokeFamily(familyId, 'logout'))) await auth.principals.invalidate();
  }

  /** One indexed query, no ORM: this is the route clients call to check their credentials. */
  async function me(principal: Principal) {
    const [row] = await store.sql<MeRow>(
      `select u.id, u.organization_id, u.email, u.name, u.role, u.operator, u.created_at, u.updated_at,
         o.name as org_name, o.created_at as org_created_at, o.updated_at as org_updated_at
       from users u join organizations o on o.id = u.organization_id
       where u.id = ? and o.id = ?`,
      [principal.user_id, principal.org_id],
    );
    if (!row) throw new UnauthorizedError(); // deleted since its credential was checked
    const { org_name, org_created_at, org_updated_at, ...user } = row;
    return {
      user: userView({ ...user, created_at: new Date(user.created_at), updated_at: new Date(user.updated_at) } as UserRow),
      organization: orgView({
        id: row.organization_id,
        name: org_name,
        created_at: new Date(org_created_at),
        updated_at: new Date(org_updated_at),
      } as OrgRow),
      via: principal.via as 'api_key' | 'access_token',
      ...(principal.key_id && principal.via === 'api_key' ? { api_key_id: principal.key_id } : {}),
    };
  }

  /** A 5-minute token for one session's SSE; the caller must be allowed that session (assertSessionAccess). */
  async function streamToken(principal: Principal, sessionId: string) {
    assertSessionAccess(principal, await store.em().findOne(Session, { id: sessionId }));
    return auth.tokens.issueStream(principal, sessionId);
  }

  return { login, refresh, logout, me, streamToken };
}

export type AuthService = ReturnType<typeof createAuthService>;
