/**
 * A statement that runs on every turn or request, kept prepared on each pooled PostgreSQL
 * connection: PostgreSQL parses and plans it once per connection instead of on every run (the
 * turn's setup read spent 0.55 ms of its 0.7 ms in the planner; issue 15). Written with `?`
 * placeholders like every other statement of the store. The embedded database runs it as an
 * ordinary statement: its connections share one PGlite session, where one connection's
 * prepared name would clash with another's.
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

export function preparedSql(name: string, text: string): PreparedSql {
  // A question mark inside a literal or an operator would be numbered as a placeholder.
  if (QUESTION_MARK_OPERATOR.test(text) || text.match(STRING_LITERAL)?.some((literal) => literal.includes('?'))) {
    throw new Error(`prepared statement ${name}: a ? that is no placeholder`);
  }
  let n = 0;
  return { name, text, numbered: text.replace(/\?/g, () => `$${++n}`) };
}
