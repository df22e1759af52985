import type { Pool, PoolClient } from 'pg';

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

/**
 * PGlite: every pool connection talks to one PGlite session, where a name the driver prepared on
 * one connection would already exist for the next (42P05). So each pool client prepares its own
 * copy under a name of its own, `<name>.<serial>`, and runs it with bound parameters like
 * PostgreSQL's path: no parameter is written into a statement's text (MikroORM's `execute`
 * inlined them, the events' JSON and the transcript included: a third of an embedded
 * conversation's allocation, and a long literal for PGlite to parse; issue 34).
 */
export function preparedPerClient(pool: Pool): RunPrepared {
  const copies = clientCopies();
  return async (statement, params) => {
    const client = await pool.connect();
    let broken: Error | undefined;
    try {
      await copies.dropEnded(client);
      return await runCopy(client, copies, statement, params);
    } catch (err) {
      // A statement the database refused leaves the connection usable (pool.query would end it for any error).
      if (!refusedByDatabase(err)) broken = err as Error;
      throw err;
    } finally {
      client.release(broken);
    }
  };
}

async function runCopy(client: PoolClient, copies: ClientCopies, statement: PreparedSql, params: unknown[]): Promise<unknown[]> {
  const run = () => client.query({ name: copies.of(client).add(statement.name), text: statement.numbered, values: params });
  try {
    return (await run()).rows;
  } catch (err) {
    // Gone from the session (deallocated, a restarted database thread) while the driver still
    // counts it as parsed on this connection: new names, which the driver prepares again, once.
    if (sqlState(err) !== PG_UNDEFINED_PREPARED_STATEMENT) throw err;
    copies.renew(client);
    return (await run()).rows;
  }
}

/** The names one client prepared in the shared session, under its serial. */
interface Copies {
  /** The client's name for `name`, now counted as prepared. */
  add(name: string): string;
}

interface ClientCopies {
  of(client: PoolClient): Copies;
  /** The client's next names are new ones. */
  renew(client: PoolClient): void;
  /**
   * Deallocates, on `client`, the copies of connections that ended (the pool's idle timeout, a
   * broken socket): they would stay in the session for good. Done on a connection in hand, as a
   * new one made when another just ended can find the server still counting that one.
   */
  dropEnded(client: PoolClient): Promise<void>;
}

/** Unique in the process, so two stores on one database thread never share a name either. */
let lastSerial = 0;

function clientCopies(): ClientCopies {
  const byClient = new WeakMap<PoolClient, Copies & { names: Map<string, string> }>();
  const ended: string[] = [];
  const create = (client: PoolClient) => {
    const serial = ++lastSerial;
    // statement name → this client's name for it
    const names = new Map<string, string>();
    const copies = {
      names,
      add(name: string) {
        let own = names.get(name);
        if (own === undefined) names.set(name, (own = `${name}.${serial}`));
        return own;
      },
    };
    byClient.set(client, copies);
    return copies;
  };
  return {
    of(client) {
      const known = byClient.get(client);
      if (known) return known;
      client.once('end', () => ended.push(...(byClient.get(client)?.names.values() ?? [])));
      return create(client);
    },
    renew: create,
    async dropEnded(client) {
      // Best effort: a name gone with a restarted database thread is refused, and that is fine.
      for (let name = ended.pop(); name !== undefined; name = ended.pop())
        await client.query(`deallocate "${name}"`).catch(() => undefined);
    },
  };
}

/** An error the server answered with (pg's DatabaseError carries its severity), not a broken connection. */
function refusedByDatabase(err: unknown): boolean {
  return typeof (err as { severity?: unknown })?.severity === 'string';
}

function sqlState(err: unknown): unknown {
  const e = err as { code?: unknown; cause?: { code?: unknown } };
  return e?.code ?? e?.cause?.code;
}
