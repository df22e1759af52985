/** Share of PostgreSQL's max_connections the instances may hold (spec section 8). */
export const POOL_SHARE_OF_MAX_CONNECTIONS = 0.8;

/**
 * Connections an instance opens besides its pool: the migration advisory lock, held on its
 * own connection while the instance starts (store.ts).
 */
export const EXTRA_CONNECTIONS_PER_INSTANCE = 1;

export interface PoolSizingInput {
  /** DATABASE_POOL_MAX of this instance. */
  poolMax: number;
  /** EXPECTED_INSTANCES: every instance is assumed to use the same pool size. */
  instances: number;
  /** PostgreSQL's `max_connections`. */
  maxConnections: number;
  /** Connections per instance outside the pool (default EXTRA_CONNECTIONS_PER_INSTANCE). */
  extraPerInstance?: number;
}

/**
 * The start-up warning of spec section 8, or null when the deployment fits:
 * (pool + extra) × instances must not exceed 80 % of max_connections.
 */
export function poolSizingWarning({ poolMax, instances, maxConnections, extraPerInstance = EXTRA_CONNECTIONS_PER_INSTANCE }: PoolSizingInput): string | null {
  const needed = (poolMax + extraPerInstance) * instances;
  const limit = Math.floor(maxConnections * POOL_SHARE_OF_MAX_CONNECTIONS);
  if (needed <= limit) return null;
  return (
    `database pool too large: ${instances} instance(s) × (DATABASE_POOL_MAX ${poolMax} + ${extraPerInstance} extra) = ${needed} connections, ` +
    `above 80 % of max_connections ${maxConnections} (${limit}); lower DATABASE_POOL_MAX or raise max_connections`
  );
}
