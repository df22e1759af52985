import { normalizeCapabilityRef, type CapabilityConfig, type CapabilityRef, type Feature } from '../capabilities/index.js';
import { assertSessionAccess, type Actor } from '../auth/index.js';
import { NotFoundError } from '../errors.js';
import { EFFECTIVE_SESSION_CONFIG_SQL, parseSessionConfig, Session, SESSION_LAYERS_JOIN_SQL } from '../db/index.js';
import type { StorageDb } from './sql.js';

/** What storage routes need of a session row. */
export interface StorageSession {
  id: string;
  organization_id: string;
  user_id: string;
  harness_id: string;
  agent_id: string | null;
  features: string[];
  capabilities: CapabilityRef[];
}

/** A session that lacks the capability behind a storage route: 404 (see docs/decisions/0024-session-files-and-storage-routes.md). */
export class FeatureNotEnabledError extends NotFoundError {
  constructor(feature: Feature) {
    super(`Not found: this session has no ${feature} capability`);
    this.name = 'FeatureNotEnabledError';
  }
}

/**
 * Session lookups for the storage REST routes: the caller's session (404 absent, 403 another
 * org's or, for a member, another user's: `assertSessionAccess`), its features, and a
 * capability's config merged harness → agent → session (spec 3.4).
 */
export function createSessionAccess(db: StorageDb) {
  async function owned(actor: Actor, sessionId: string): Promise<StorageSession> {
    const row = (await db.em().findOne(Session, { id: sessionId })) as StorageSession | null;
    assertSessionAccess(actor, row);
    return row!;
  }

  return {
    owned,

    /** The caller's session, which must have `feature` among its resolved features. */
    async withFeature(actor: Actor, sessionId: string, feature: Feature): Promise<StorageSession> {
      const session = await owned(actor, sessionId);
      if (!session.features.includes(feature)) throw new FeatureNotEnabledError(feature);
      return session;
    },

    /** The merged config of `capabilityId` over the session's harness, agent (its configuration snapshot) and session items ({} when unset). */
    async capabilityConfig(session: StorageSession, capabilityId: string): Promise<CapabilityConfig> {
      const [row] = await db.sql<{ config: unknown }>(
        `select ${EFFECTIVE_SESSION_CONFIG_SQL} as config from ${SESSION_LAYERS_JOIN_SQL} where s.id = ?`,
        [session.id],
      );
      const { harness, agent } = parseSessionConfig(row?.config);
      const items = [...harness.capabilities, ...(agent?.capabilities ?? []), ...(session.capabilities ?? [])];
      let config: CapabilityConfig = {};
      for (const item of items.map(normalizeCapabilityRef)) if (item.ref === capabilityId) config = { ...config, ...item.config };
      return config;
    },
  };
}

export type SessionAccess = ReturnType<typeof createSessionAccess>;
