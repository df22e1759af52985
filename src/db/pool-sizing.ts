/** Share of PostgreSQL's max_connections the instances' pools may hold (spec section 8): 4/5 = 80 %. */
export const POOL_SHARE_OF_MAX_CONNECTIONS = { numerator: 4, denominator: 5 } as const;

export interface PoolSizingInput {
  /** DATABASE_POOL_MAX of this instance. */
  poolMax: number;
  /** EXPECTED_INSTANCES: every instance is assumed to use the same pool size. */
  instances: number;
  /** PostgreSQL's `max_connections`. */
  maxConnections: number;
}

/**
 * The start-up warning of spec section 8, or null when the deployment fits: it warns when
 * pool × instances exceeds 80 % of max_connections (exactly 80 % fits). Only the pools are
 * counted, as the spec states the rule; the migration lock's connection is short-lived and
 * closed before the pool is used.
 */
export function poolSizingWarning({ poolMax, instances, maxConnections }: PoolSizingInput): string | null {
  const counted = poolMax * instances;
  const { numerator, denominator } = POOL_SHARE_OF_MAX_CONNECTIONS;
  // Compared in integers: 80 % of max_connections may be fractional (1.6 of 2).
  if (counted * denominator <= maxConnections * numerator) return null;
  const limit = (maxConnections * numerator) / denominator;
  return (
    `database pool too large: counted DATABASE_POOL_MAX ${poolMax} per instance × EXPECTED_INSTANCES ${instances} = ${counted} connections, ` +
    `which exceeds 80 % of max_connections ${maxConnections} (${Number(limit.toFixed(1))}); workers outside EXPECTED_INSTANCES are not counted; ` +
    `lower DATABASE_POOL_MAX or raise max_connections`
  );
}
