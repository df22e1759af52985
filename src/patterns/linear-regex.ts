/**
 * Regular expressions that callers supply (grep patterns, globs) run in re2js, a port of RE2:
 * matching time grows linearly with the input whatever the pattern, so `^(a+)+$` cannot stall
 * the event loop the way it does in V8's backtracking engine. The price is RE2 syntax: no
 * backreferences and no lookaround (docs/decisions.md, "Caller-controlled parsers and patterns").
 */
import { RE2JS } from 're2js';
import { InvalidRequestError } from '../errors.js';

/** A compiled caller pattern; `test` is true when it matches anywhere in `text`. */
export interface LinearRegex {
  readonly source: string;
  test(text: string): boolean;
}

export interface LinearRegexOptions {
  /** Case-insensitive (Unicode case folding). Default false. */
  ignoreCase?: boolean;
}

/**
 * Compiles `pattern` (RE2 syntax; `\uXXXX` escapes are accepted as in JavaScript). Throws
 * InvalidRequestError "Invalid regular expression: …" naming unsupported syntax plainly.
 */
export function compileLinearRegex(pattern: string, { ignoreCase = false }: LinearRegexOptions = {}): LinearRegex {
  let re: RE2JS;
  try {
    re = RE2JS.compile(fromJsEscapes(pattern), ignoreCase ? RE2JS.CASE_INSENSITIVE : 0);
  } catch (err) {
    throw new InvalidRequestError(`Invalid regular expression: ${explainSyntaxError(pattern, err)}`, { cause: err });
  }
  return { source: pattern, test: (text) => re.test(text) };
}

/** Rewrites JavaScript's `\uXXXX` to RE2's `\x{XXXX}`; every other escape stays as written. */
function fromJsEscapes(pattern: string): string {
  if (!pattern.includes('\\u')) return pattern;
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c !== '\\') {
      out += c;
      continue;
    }
    const hex = /^u([0-9a-fA-F]{4})/.exec(pattern.slice(i + 1, i + 6));
    if (hex) {
      out += `\\x{${hex[1]}}`;
      i += 5;
    } else {
      out += c + (pattern[i + 1] ?? '');
      i++;
    }
  }
  return out;
}

const LOOKAROUND_RE = /\(\?<?[=!]/;
const BACKREFERENCE_RE = /\\(?:[1-9]|k<)/;

/** A message for the caller: what is unsupported and why, else RE2's own reason. */
function explainSyntaxError(pattern: string, err: unknown): string {
  const why = err instanceof Error ? err.message.replace(/^error parsing regexp: /, '') : 'cannot be parsed';
  if (LOOKAROUND_RE.test(pattern) && /Perl syntax|named capture/.test(why)) {
    return `lookahead and lookbehind ((?=, (?!, (?<=, (?<!) are not supported; patterns run in a linear-time engine (RE2 syntax)`;
  }
  if (BACKREFERENCE_RE.test(pattern) && /escape sequence/.test(why)) {
    return `backreferences (\\1, \\k<name>) are not supported; patterns run in a linear-time engine (RE2 syntax)`;
  }
  return why;
}
