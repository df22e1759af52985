/**
 * Checks on SQL text, made on SQLite's own tokens (`sql-lexer.ts`) so that quoting, comments and
 * case change nothing: a pragma name counts as SQLite will read it, literals never count.
 */
import { type SqlToken, sqlStatements, tokenizeSql, word } from './sql-lexer.js';

/** Upper-cased bare words of the SQL (keywords and unquoted identifiers). */
export function sqlWords(sql: string): string[] {
  return tokenizeSql(sql)
    .map(word)
    .filter((w) => w !== '');
}

/** Keywords that reach outside the one database file (other files, the engine's memory FS). */
const FILE_ACCESS = new Set(['ATTACH', 'DETACH']);
/**
 * Pragmas that would lift the sandbox's limits (file size in pages, temp files in the engine's
 * unbounded in-memory file system, the heap shared by every database of a worker). Several take
 * effect while SQLite prepares the statement, so they must be refused before SQLite sees them.
 */
const LIMIT_PRAGMAS = new Set([
  'max_page_count',
  'page_size',
  'temp_store',
  'temp_store_directory',
  'data_store_directory',
  'hard_heap_limit',
  'soft_heap_limit',
  'mmap_size',
]);
/** Statements that manage transactions themselves. */
const TRANSACTION_CONTROL = new Set(['BEGIN', 'COMMIT', 'END', 'ROLLBACK', 'SAVEPOINT', 'RELEASE']);
/** First keywords of statements that only read. */
const READ_ONLY_STARTS = new Set(['SELECT', 'WITH', 'VALUES', 'PRAGMA', 'EXPLAIN']);

/** A token SQLite accepts as a name: a bare or quoted identifier, or a string (`nm ::= id | STRING`). */
function nameOf(token: SqlToken | undefined): string | null {
  if (!token || (token.kind !== 'word' && token.kind !== 'quoted' && token.kind !== 'string')) return null;
  // SQLite compares pragma names ASCII-case-insensitively.
  return token.value.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

/** The name of the pragma each `PRAGMA [schema.]name` in the tokens sets or reads. */
function pragmaNames(tokens: SqlToken[]): string[] {
  const names: string[] = [];
  tokens.forEach((token, i) => {
    if (word(token) !== 'PRAGMA') return;
    const qualified = tokens[i + 2]?.text === '.';
    const name = nameOf(tokens[qualified ? i + 3 : i + 1]);
    if (name !== null) names.push(name);
  });
  return names;
}

function statementReason(tokens: SqlToken[]): string | null {
  const words = tokens.map(word);
  const bad = words.find((w) => FILE_ACCESS.has(w));
  if (bad) return `${bad} is not allowed: each database is a single, isolated file.`;
  // `VACUUM [schema] INTO file`: the schema may be any name, quoted or not.
  if (words[0] === 'VACUUM' && words.includes('INTO')) return 'VACUUM INTO is not allowed.';
  const pragma = pragmaNames(tokens).find((name) => LIMIT_PRAGMAS.has(name));
  if (pragma) return `PRAGMA ${pragma} is not allowed: the service sets it.`;
  return null;
}

/** A reason to refuse the SQL outright, or null. */
export function forbiddenSql(sql: string): string | null {
  for (const statement of sqlStatements(sql)) {
    const reason = statementReason(statement);
    if (reason) return reason;
  }
  return null;
}

/** True when the SQL contains its own BEGIN/COMMIT/SAVEPOINT… statements. */
export function managesTransactions(sql: string): boolean {
  return sqlStatements(sql).some((statement) => TRANSACTION_CONTROL.has(word(statement[0])));
}

/** True when the statement starts with a reading keyword (SELECT, WITH, VALUES, PRAGMA, EXPLAIN). */
export function startsReadOnly(sql: string): boolean {
  return READ_ONLY_STARTS.has(word(sqlStatements(sql)[0]?.[0]));
}

/** True when nothing but whitespace, semicolons and comments is left. */
export function isBlankSql(sql: string): boolean {
  return sqlStatements(sql).length === 0;
}
