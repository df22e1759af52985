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
 * The organisation's count of `table`'s rows (kept by triggers, migration 0029), locked until
 * commit, on every instance. An upsert that waited for the lock reads the count as the previous
 * create left it: parallel creates never overshoot, and the check costs one row whatever the
 * organisation holds. Parameter: the organisation's id. As a CTE (`cap`), it lets one statement
 * check the cap and insert the row (src/api/sessions/service.ts).
 */
export const orgCountUpsert = (table: CappedTable) =>
  `insert into org_row_counts (organization_id, counted, n) values (?::uuid, '${table}', 0)
   on conflict (organization_id, counted) do update set n = org_row_counts.n returning n`;

export function orgLimitError(table: CappedTable, max: number): OrgLimitError {
  return new OrgLimitError(`Organisation limit reached: it may hold at most ${max} ${CAPPED[table]}; the operator sets this limit`);
}

/**
 * Refuses (OrgLimitError, 429) when the organisation already holds `max` rows of `table`. Call it
 * inside the transaction that inserts the row (orgCountUpsert's lock).
 */
export async function assertOrgHasRoom(em: EntityManager, table: CappedTable, orgId: string, max: number): Promise<void> {
  const tx = em as unknown as SqlEntityManager;
  const [row] = await tx.execute<{ n: unknown }[]>(orgCountUpsert(table), [orgId]);
  if (Number(row?.n ?? 0) >= max) throw orgLimitError(table, max);
}
