import { createSession, runTools, type ToolOutcome } from '../api/fs/helpers.js';
import type { ServiceEndpoint } from './app.js';

/** Never ends on its own: counts an unbounded recursive CTE. */
export const RUNAWAY_SQL = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c';

/** A session whose tools include `session_sql_database`; returns its id. */
export function createSqlSession(app: ServiceEndpoint, key?: string): Promise<string> {
  return createSession(app, ['session_sql_database'], key);
}

/**
 * Makes the service run `sql` through a real turn: llmsim answers `@tool sql_execute {...}`
 * (which creates the database on first use) or `@tool sql_query {...}`. Resolves with the tool
 * outcome once the turn has ended.
 */
export async function runSql(
  app: ServiceEndpoint,
  sessionId: string,
  sql: string,
  {
    tool = 'sql_execute',
    database = 'main',
    params,
    timeoutMs,
    key,
  }: {
    tool?: 'sql_execute' | 'sql_query';
    database?: string;
    params?: (string | number | boolean | null)[];
    timeoutMs?: number;
    key?: string;
  } = {},
): Promise<ToolOutcome> {
  const [outcome] = await runTools(app, sessionId, [[tool, { database, sql, ...(params ? { params } : {}) }]], {
    ...(timeoutMs ? { timeoutMs } : {}),
    ...(key ? { key } : {}),
  });
  return outcome!;
}
