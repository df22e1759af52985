import type { EntityManager } from '@mikro-orm/core';
import type { SqlEntityManager } from '@mikro-orm/sql';
import { OrgLimitError } from '../errors.js';

/** The tables an organisation's count caps bound (ORG_MAX_AGENTS, ORG_MAX_SESSIONS), and how a refusal names their rows. */
const CAPPED = {
  // Archived agents stay stored (and readable), so they take their place too.
  agents: 'agents, archived ones included',
  sessions: 'sessions',
} as const;

export type CappedTable = keyof typeof CAPPED;

/**
 * Refuses (OrgLimitError, 429) when the organisation already holds `max` rows of `table`. Call it
 * inside the transaction that inserts the row: the advisory lock serialises the organisation's
 * creates of that table, on every instance, until commit, and the count is a statement after the
 * lock, so it sees every row committed before: parallel creates never overshoot.
 */
export async function assertOrgHasRoom(em: EntityManager, table: CappedTable, orgId: string, max: number): Promise<void> {
  const tx = em as unknown as SqlEntityManager;
  await tx.execute('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`org-cap:${table}:${orgId}`]);
  const [row] = await tx.execute<{ n: unknown }[]>(`select count(*) as n from ${table} where organization_id = ?`, [orgId]);
  if (Number(row?.n ?? 0) >= max)
    throw new OrgLimitError(`Organisation limit reached: it may hold at most ${max} ${CAPPED[table]}; the operator sets this limit`);
}
