/**
 * Regular expressions that callers supply (grep patterns, globs) run in re2js, a port of RE2:
 * matching time grows linearly with the input whatever the pattern, so `^(a+)+$` cannot stall
 * the event loop the way it does in V8's backtracking engine. The price is RE2 syntax: no
 * backreferences and no lookaround (docs/decisions/0047-caller-documents-bounded.md).
 *
 * Linear is not bounded, though: the constant is the compiled program's size, which counted
 * repeats multiply (`(a|b|…){1000}` is thousands of instructions, each stepped for every input
 * character), and compiling a program costs time in proportion to its size too. So a pattern's
 * program is capped at MAX_PROGRAM_SIZE, and tenant patterns are compiled and matched off the
 * event loop, under a deadline (src/offthread/grep-pool.ts).
 */
import { RE2JS } from 're2js';
import { InvalidRequestError } from '../errors.js';

/**
 * Most instructions a caller's pattern may compile to. RE2's own default allows hundreds of
 * thousands; this is what a 1000-character literal or alternation needs, while the work of one
 * line (characters × instructions, at worst) stays near half a second.
 */
export const MAX_PROGRAM_SIZE = 2000;

/** A compiled caller pattern; `test` is true when it matches anywhere in `text`. */
export interface LinearRegex {
  readonly source: string;
  /** Instructions of the compiled program: the cost of each input character, at worst. */
  readonly programSize: number;
  test(text: string): boolean;
}

export interface LinearRegexOptions {
  /** Case-insensitive (Unicode case folding). Default false. */
  ignoreCase?: boolean;
}

/**
 * Compiles `pattern` (RE2 syntax; `\uXXXX` escapes are accepted as in JavaScript). Throws
 * InvalidRequestError "Invalid regular expression: …" naming unsupported syntax plainly, and
 * "Pattern too complex: …" past MAX_PROGRAM_SIZE. Compiling costs time in proportion to the
 * program, up to seconds for the largest RE2 accepts: call it on a worker thread for tenant input.
 */
export function compileLinearRegex(pattern: string, { ignoreCase = false }: LinearRegexOptions = {}): LinearRegex {
  let re: RE2JS;
  try {
    re = RE2JS.compile(fromJsEscapes(pattern), ignoreCase ? RE2JS.CASE_INSENSITIVE : 0);
  } catch (err) {
    // RE2's own size limit: the same refusal as ours, worded the same.
    if (err instanceof Error && /expression too large/.test(err.message)) throw tooComplex('more than');
    throw new InvalidRequestError(`Invalid regular expression: ${explainSyntaxError(pattern, err)}`, { cause: err });
  }
  const programSize = re.programSize();
  if (programSize > MAX_PROGRAM_SIZE) throw tooComplex(`${programSize} instructions, more than`);
  return { source: pattern, programSize, test: (text) => re.test(text) };
}

function tooComplex(size: string): InvalidRequestError {
  return new InvalidRequestError(
    `Pattern too complex: it compiles to ${size} ${MAX_PROGRAM_SIZE} instructions; use fewer alternatives or smaller repeat counts`,
  );
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
