import type { Pool } from 'pg';

/**
 * A statement that runs on every turn or request, kept prepared: the database parses and plans
 * it once instead of on every run (PostgreSQL spent 0.55 ms of the turn's setup read's 0.7 ms in
 * the planner, PGlite ~2.4 of 3.1 ms; issue 15). Written with `?` placeholders like every other
 * statement of the store.
 */
export interface PreparedSql {
  /** Unique per text: a connection refuses one name for two texts. */
  readonly name: string;
  /** With `?` placeholders. */
  readonly text: string;
  /** With `$1, $2, …` placeholders, as the extended protocol takes them. */
  readonly numbered: string;
}

const STRING_LITERAL = /'(?:[^']|'')*'/g;
/** jsonb's `?|`, `?&` and a doubled `??` (MikroORM's identifier placeholder). */
const QUESTION_MARK_OPERATOR = /\?[|&?]/;

/** Safe inside a quoted identifier as it is. */
const NAME = /^[a-z0-9][a-z0-9.-]*$/;

export function preparedSql(name: string, text: string): PreparedSql {
  if (!NAME.test(name)) throw new Error(`prepared statement name ${name}: lower-case letters, digits, dots and dashes only`);
  // A question mark inside a literal or an operator would be numbered as a placeholder.
  if (QUESTION_MARK_OPERATOR.test(text) || text.match(STRING_LITERAL)?.some((literal) => literal.includes('?'))) {
    throw new Error(`prepared statement ${name}: a ? that is no placeholder`);
  }
  let n = 0;
  return { name, text, numbered: text.replace(/\?/g, () => `$${++n}`) };
}

/** Runs a prepared statement with its parameters; resolves to its rows. */
export type RunPrepared = (statement: PreparedSql, params: unknown[]) => Promise<unknown[]>;

/** PostgreSQL: named statements of the extended protocol, which the driver prepares once on each pooled connection. */
export function preparedPerConnection(pool: Pool): RunPrepared {
  return async ({ name, numbered }, params) => (await pool.query({ name, text: numbered, values: params })).rows;
}

const PG_UNDEFINED_PREPARED_STATEMENT = '26000';
const PG_DUPLICATE_PREPARED_STATEMENT = '42P05';

/**
 * PGlite: every pool connection talks to one PGlite session, where a name the driver prepared on
 * one connection would already exist for the next. So each statement is prepared once in that
 * session with `PREPARE` and run with `EXECUTE`, its parameters inlined like any statement's
 * (`execute`: the ORM's raw statement path).
 */
export function preparedInSharedSession(execute: (text: string, params: unknown[]) => Promise<unknown[]>): RunPrepared {
  const prepared = new Set<string>();
  const prepare = async ({ name, numbered }: PreparedSql) => {
    try {
      await execute(`prepare "${name}" as ${numbered}`, []);
    } catch (err) {
      if (sqlState(err) !== PG_DUPLICATE_PREPARED_STATEMENT) throw err;
    }
    prepared.add(name);
  };
  return async (statement, params) => {
    const run = () => execute(`execute "${statement.name}"${params.length ? `(${params.map(() => '?').join(', ')})` : ''}`, params);
    if (!prepared.has(statement.name)) await prepare(statement);
    try {
      return await run();
    } catch (err) {
      // Gone from the session (a restarted database thread, say): prepare it again once.
      if (sqlState(err) !== PG_UNDEFINED_PREPARED_STATEMENT) throw err;
      prepared.delete(statement.name);
      await prepare(statement);
      return run();
    }
  };
}

function sqlState(err: unknown): unknown {
  const e = err as { code?: unknown; cause?: { code?: unknown } };
  return e?.code ?? e?.cause?.code;
}
