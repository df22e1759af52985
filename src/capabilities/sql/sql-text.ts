/** Lexical checks on SQL text: keywords outside string literals, quoted identifiers and comments. */

const TOKENS = /--[^\n]*|\/\*[\s\S]*?(?:\*\/|$)|'(?:[^']|'')*'?|"(?:[^"]|"")*"?|`[^`]*`?|\[[^\]]*\]?/g;

function isComment(token: string): boolean {
  return token.startsWith('--') || token.startsWith('/*');
}

/** The SQL with comments, string literals and quoted identifiers replaced by spaces. */
export function stripSqlLiterals(sql: string): string {
  return sql.replace(TOKENS, ' ');
}

/** Upper-cased bare words of the SQL (keywords and unquoted identifiers). */
export function sqlWords(sql: string): string[] {
  return wordsOfStripped(stripSqlLiterals(sql));
}

function wordsOfStripped(stripped: string): string[] {
  return stripped.toUpperCase().match(/[A-Z_][A-Z0-9_$]*/g) ?? [];
}

/** Keywords that reach outside the one database file (other files, the engine's memory FS). */
const FILE_ACCESS = new Set(['ATTACH', 'DETACH']);
/** Pragmas that would lift the sandbox's limits (file size in pages, temp files, heap). */
const LIMIT_PRAGMAS = new Set(['MAX_PAGE_COUNT', 'PAGE_SIZE', 'TEMP_STORE', 'HARD_HEAP_LIMIT', 'SOFT_HEAP_LIMIT', 'MMAP_SIZE']);
/** `PRAGMA name` or `PRAGMA schema.name`, capturing the name. */
const PRAGMA_NAME = /\bPRAGMA\s+(?:[A-Za-z_][\w$]*\s*\.\s*)?([A-Za-z_][\w$]*)/gi;
/** Statements that manage transactions themselves. */
const TRANSACTION_CONTROL = new Set(['BEGIN', 'COMMIT', 'END', 'ROLLBACK', 'SAVEPOINT', 'RELEASE']);
/** First keywords of statements that only read. */
const READ_ONLY_STARTS = new Set(['SELECT', 'WITH', 'VALUES', 'PRAGMA', 'EXPLAIN']);

/** A reason to refuse the SQL outright, or null. */
export function forbiddenSql(sql: string): string | null {
  const stripped = stripSqlLiterals(sql);
  const words = wordsOfStripped(stripped);
  const bad = words.find((w) => FILE_ACCESS.has(w));
  if (bad) return `${bad} is not allowed: each database is a single, isolated file.`;
  for (let i = 0; i < words.length - 1; i++) {
    if (words[i] === 'VACUUM' && words[i + 1] === 'INTO') return 'VACUUM INTO is not allowed.';
  }
  for (const [, name] of stripped.matchAll(PRAGMA_NAME)) {
    if (LIMIT_PRAGMAS.has(name!.toUpperCase())) return `PRAGMA ${name!.toLowerCase()} is not allowed: the service sets it.`;
  }
  return null;
}

/** True when the SQL contains its own BEGIN/COMMIT/SAVEPOINT… statements. */
export function managesTransactions(sql: string): boolean {
  return stripSqlLiterals(sql)
    .split(';')
    .some((statement) => TRANSACTION_CONTROL.has(wordsOfStripped(statement)[0] ?? ''));
}

/** True when the statement starts with a reading keyword (SELECT, WITH, VALUES, PRAGMA, EXPLAIN). */
export function startsReadOnly(sql: string): boolean {
  return READ_ONLY_STARTS.has(sqlWords(sql)[0] ?? '');
}

/** True when nothing but whitespace, semicolons and comments is left. */
export function isBlankSql(sql: string): boolean {
  return sql.replace(TOKENS, (t) => (isComment(t) ? ' ' : t)).replace(/[\s;]/g, '') === '';
}
