import { createHash } from 'node:crypto';
import { LockMode, type EntityManager } from '@mikro-orm/core';
import { newToken } from '../ids.js';
import type { Store } from '../db/index.js';
import { RefreshToken, TokenFamily } from '../db/entities/index.js';

/** Prefix of refresh tokens (opaque, random; never JWTs). */
export const REFRESH_TOKEN_PREFIX = 'rt_';

export type RevokeReason = 'logout' | 'reuse' | 'password_changed' | 'user_deleted';

export type RotateResult =
  | { ok: true; token: string; familyId: string; userId: string }
  | { ok: false; reason: 'unknown' | 'expired' | 'revoked' | 'reused' };

function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/**
 * Rotating refresh tokens in families. A token works once: refreshing marks it used and issues
 * its successor in the same family. Presenting a used token again means it was copied, so the
 * whole family (every descendant, and the access tokens bound to it) is revoked.
 */
export function createRefreshTokens({ store, ttlS }: { store: Store /** Lifetime of each token in seconds. */; ttlS: number }) {
  function mint(em: EntityManager, familyId: string, user: { id: string; organization_id: string }): string {
    const token = newToken(REFRESH_TOKEN_PREFIX, 32);
    em.create(RefreshToken, {
      organization_id: user.organization_id,
      user_id: user.id,
      family_id: familyId,
      token_hash: hashToken(token),
      expires_at: new Date(Date.now() + ttlS * 1000),
    });
    return token;
  }

  /** Starts a family (one login) with its first token. */
  async function start(user: { id: string; organization_id: string }): Promise<{ token: string; familyId: string }> {
    return store.em().transactional(async (tx) => {
      const family = tx.create(TokenFamily, { organization_id: user.organization_id, user_id: user.id });
      await tx.flush(); // no declared relations: the family row must be inserted before its token
      const token = mint(tx, family.id, user);
      return { token, familyId: family.id };
    });
  }

  /** Exchanges a token for its successor; the row lock makes concurrent use of one token a reuse. */
  async function rotate(token: string): Promise<RotateResult> {
    return store.em().transactional(async (tx) => {
      const row = await tx.findOne(RefreshToken, { token_hash: hashToken(token) }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!row) return { ok: false, reason: 'unknown' } as const;
      const family = await tx.findOne(TokenFamily, { id: row.family_id });
      if (!family || family.revoked_at) return { ok: false, reason: 'revoked' } as const;
      if (row.used_at) {
        family.revoked_at = new Date();
        family.revoke_reason = 'reuse';
        return { ok: false, reason: 'reused' } as const;
      }
      if (row.expires_at.getTime() <= Date.now()) return { ok: false, reason: 'expired' } as const;
      row.used_at = new Date();
      const next = mint(tx, family.id, { id: row.user_id, organization_id: row.organization_id });
      return { ok: true, token: next, familyId: family.id, userId: row.user_id } as const;
    });
  }

  /** Revokes one family (logout); true when it was live. */
  async function revokeFamily(familyId: string, reason: RevokeReason): Promise<boolean> {
    const n = await store
      .em()
      .nativeUpdate(TokenFamily, { id: familyId, revoked_at: null }, { revoked_at: new Date(), revoke_reason: reason });
    return n > 0;
  }

  /** Revokes every live family of a user (password change). */
  async function revokeUser(userId: string, reason: RevokeReason): Promise<number> {
    return store.em().nativeUpdate(TokenFamily, { user_id: userId, revoked_at: null }, { revoked_at: new Date(), revoke_reason: reason });
  }

  return { start, rotate, revokeFamily, revokeUser };
}

export type RefreshTokens = ReturnType<typeof createRefreshTokens>;
