import { LRUCache } from 'lru-cache';

/** Who a session belongs to: never changes for the session's life (spec 2.3). */
export interface SessionOwner {
  organization_id: string;
  user_id: string;
}

export interface SessionOwnersOptions {
  /** How long an owner is reused, in ms; also the longest a session deleted on another instance still answers here. */
  ttlMs: number;
  maxEntries: number;
}

/** Reuse window and size used by the app (docs/decisions/0078-session-owners-and-guarded-agent-insert.md). */
export const SESSION_OWNERS_DEFAULTS: SessionOwnersOptions = { ttlMs: 10_000, maxEntries: 20_000 };

/**
 * The owners of sessions this instance created or checked lately, so that opening a session's
 * stream right after creating it (every conversation does) needs no database read (issue 15).
 * Safe to reuse because an owner never changes; the one thing a cached entry can miss is a
 * delete on another instance (a delete here forgets at once): for up to `ttlMs` that instance's
 * callers, already the owners, then read an empty stream instead of a 404.
 */
export function createSessionOwners({ ttlMs, maxEntries }: SessionOwnersOptions) {
  const owners = new LRUCache<string, SessionOwner>({ max: maxEntries, ttl: ttlMs, ttlAutopurge: false });

  return {
    remember(sessionId: string, owner: SessionOwner): void {
      owners.set(sessionId, { organization_id: owner.organization_id, user_id: owner.user_id });
    },
    forget(sessionId: string): void {
      owners.delete(sessionId);
    },
    /** The known owner, else `load`'s answer (kept when the session exists); null: no such session. */
    async lookup(sessionId: string, load: () => Promise<SessionOwner | null | undefined>): Promise<SessionOwner | null> {
      const known = owners.get(sessionId);
      if (known) return known;
      const loaded = await load();
      if (!loaded) return null;
      const owner = { organization_id: loaded.organization_id, user_id: loaded.user_id };
      owners.set(sessionId, owner);
      return owner;
    },
  };
}

export type SessionOwners = ReturnType<typeof createSessionOwners>;
