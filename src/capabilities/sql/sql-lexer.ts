/**
 * SQLite's tokenizer (`sqlite3GetToken` in tokenize.c, 3.4x), ported for the sandbox's checks.
 * The guard must see the SQL as SQLite will: a name SQLite reads as `max_page_count` is one
 * whether written bare, "quoted", [bracketed], `backticked` or as a 'string', and text SQLite
 * reads as code must never be hidden as a literal. Only the token boundaries and the dequoted
 * value matter here, so numbers and operators are left coarse: splitting them finer than SQLite
 * can only make a check see more words, never fewer.
 */

export type SqlTokenKind =
  /** Keyword or bare identifier. */
  | 'word'
  /** Identifier in "…", […] or `…`. */
  | 'quoted'
  /** String literal '…' (SQLite also accepts one where a name is expected, e.g. a pragma's). */
  | 'string'
  | 'variable'
  | 'semicolon'
  | 'space'
  | 'comment'
  /** Numbers, blobs, operators, punctuation. */
  | 'other';

export interface SqlToken {
  kind: SqlTokenKind;
  /** The source text of the token. */
  text: string;
  /** For words, quoted identifiers and strings: the name SQLite reads (quotes removed); else the text. */
  value: string;
}

/** SQLite's `sqlite3Isspace`: tab, newline, vertical tab, form feed, carriage return, space. */
function isSpace(c: string | undefined): boolean {
  return c === ' ' || c === '\t' || c === '\n' || c === '\v' || c === '\f' || c === '\r';
}

/** SQLite's `IdChar`: ASCII letters, digits, `_`, `$`, and every non-ASCII character (UTF-8 bytes ≥ 0x80). */
function isIdChar(c: string | undefined): boolean {
  return c !== undefined && (/[A-Za-z0-9_$]/.test(c) || c.charCodeAt(0) >= 0x80);
}

function isIdStart(c: string | undefined): boolean {
  return isIdChar(c) && c !== '$' && !/[0-9]/.test(c!);
}

/** Length of a quoted run starting at `i` that closes with `close`; a doubled `close` is an escaped one (not for `]`). */
function quotedLength(sql: string, i: number, close: string): number {
  let j = i + 1;
  while (j < sql.length) {
    if (sql[j] === close) {
      if (close !== ']' && sql[j + 1] === close) j += 2;
      else return j + 1 - i;
    } else j++;
  }
  // Unterminated: SQLite answers "unrecognized token" for the rest, so nothing after it runs.
  return sql.length - i;
}

/** `$name`, `@name`, `:name`, `#name` with Tcl-style `::` segments and a `(…)` suffix, as SQLite reads them. */
function variableLength(sql: string, i: number): number {
  let j = i + 1;
  let n = 0;
  while (j < sql.length) {
    const c = sql[j];
    if (isIdChar(c)) {
      n++;
      j++;
    } else if (c === '(' && n > 0) {
      do j++;
      while (j < sql.length && !isSpace(sql[j]) && sql[j] !== ')');
      if (sql[j] === ')') j++;
      return j - i;
    } else if (c === ':' && sql[j + 1] === ':') j += 2;
    else break;
  }
  return j - i;
}

function dequote(text: string): string {
  const open = text[0]!;
  const close = open === '[' ? ']' : open;
  const closed = text.length > 1 && text.endsWith(close);
  const inner = text.slice(1, closed ? -1 : undefined);
  return open === '[' ? inner : inner.split(close + close).join(close);
}

function tokenAt(sql: string, i: number): { kind: SqlTokenKind; length: number } {
  const c = sql[i]!;
  if (isSpace(c)) {
    let j = i + 1;
    while (isSpace(sql[j])) j++;
    return { kind: 'space', length: j - i };
  }
  if (c === '-' && sql[i + 1] === '-') {
    const end = sql.indexOf('\n', i);
    return { kind: 'comment', length: (end < 0 ? sql.length : end + 1) - i };
  }
  if (c === '/' && sql[i + 1] === '*') {
    const end = sql.indexOf('*/', i + 2);
    return { kind: 'comment', length: (end < 0 ? sql.length : end + 2) - i };
  }
  if (c === "'") return { kind: 'string', length: quotedLength(sql, i, "'") };
  if (c === '"' || c === '`') return { kind: 'quoted', length: quotedLength(sql, i, c) };
  if (c === '[') return { kind: 'quoted', length: quotedLength(sql, i, ']') };
  if (c === ';') return { kind: 'semicolon', length: 1 };
  if ((c === 'x' || c === 'X') && sql[i + 1] === "'") return { kind: 'other', length: 1 + quotedLength(sql, i + 1, "'") };
  if (c === '?') {
    let j = i + 1;
    while (/[0-9]/.test(sql[j] ?? '')) j++;
    return { kind: 'variable', length: j - i };
  }
  if (c === '$' || c === '@' || c === ':' || c === '#') return { kind: 'variable', length: variableLength(sql, i) };
  if (isIdStart(c)) {
    let j = i + 1;
    while (isIdChar(sql[j])) j++;
    return { kind: 'word', length: j - i };
  }
  return { kind: 'other', length: 1 };
}

/** The SQL's tokens in order, whitespace and comments included. */
export function tokenizeSql(sql: string): SqlToken[] {
  const tokens: SqlToken[] = [];
  for (let i = 0; i < sql.length; ) {
    const { kind, length } = tokenAt(sql, i);
    const text = sql.slice(i, i + length);
    tokens.push({ kind, text, value: kind === 'quoted' || kind === 'string' ? dequote(text) : text });
    i += length;
  }
  return tokens;
}

/**
 * The tokens that SQLite parses (no whitespace, no comments), split into statements at `;`. A
 * `CREATE TRIGGER` body holds statements of its own: as in `sqlite3_complete`, it ends only at
 * a `;` after an `END` that follows one of the body's `;`.
 */
export function sqlStatements(sql: string): SqlToken[][] {
  const statements: SqlToken[][] = [];
  let current: SqlToken[] = [];
  /** Index in `current` just past the body's last `;`, while inside a trigger. */
  let bodyPart = -1;
  for (const token of tokenizeSql(sql)) {
    if (token.kind === 'space' || token.kind === 'comment') continue;
    if (token.kind !== 'semicolon') {
      current.push(token);
      continue;
    }
    const inTrigger = isCreateTrigger(current);
    const ended = !inTrigger || (current.length === bodyPart + 1 && word(current[bodyPart]) === 'END');
    if (!ended) {
      current.push(token);
      bodyPart = current.length;
      continue;
    }
    if (current.length > 0) statements.push(current);
    current = [];
    bodyPart = -1;
  }
  if (current.length > 0) statements.push(current);
  return statements;
}

/** A bare word in upper case (keywords compare case-insensitively), or '' for any other token. */
export function word(token: SqlToken | undefined): string {
  return token?.kind === 'word' ? token.text.toUpperCase() : '';
}

function isCreateTrigger(tokens: SqlToken[]): boolean {
  if (word(tokens[0]) !== 'CREATE') return false;
  const next = word(tokens[1]);
  return next === 'TRIGGER' || ((next === 'TEMP' || next === 'TEMPORARY') && word(tokens[2]) === 'TRIGGER');
}
