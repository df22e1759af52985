import { InvalidRequestError } from '../errors.js';
import { isStorableText } from '../storable-text.js';

/**
 * Input hygiene that every request gets before validation
 * (docs/decisions/0039-input-hygiene.md). Strings must be well-formed Unicode without NUL: PostgreSQL text refuses
 * NUL, and lone surrogates cannot be encoded as UTF-8 for the database, the event log or an LLM.
 * JSON bodies are scanned once, byte by byte, before JSON.parse: nesting beyond the limit is refused
 * there, because a deep document overflows the stack of every recursive walker after the parser
 * (validation, serialisation, the store), and the same scan finds `\u0000` and unpaired `\uD800`
 * escapes, the only ways JSON text can produce those characters. Nothing is allocated for clean input.
 */

/** MAX_JSON_DEPTH's default: far beyond any document the API defines, far below any stack limit. */
export const DEFAULT_MAX_JSON_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const LOWER_U = 0x75;

export type JsonScanProblem = 'too_deep' | 'nul' | 'lone_surrogate';

/**
 * One linear pass over raw JSON text: the first hygiene problem, or null. Malformed JSON is left to
 * JSON.parse (the scan only tracks strings and brackets, so it never misreads valid JSON).
 */
export function scanJson(raw: Uint8Array, maxDepth: number): JsonScanProblem | null {
  let depth = 0;
  let inString = false;
  /** Set just after a `\uD800`-`\uDBFF` escape: the next thing must be a low-surrogate escape. */
  let wantLow = false;
  const n = raw.length;
  for (let i = 0; i < n; i++) {
    const c = raw[i]!;
    if (inString) {
      if (c === BACKSLASH) {
        if (raw[i + 1] === LOWER_U) {
          const unit = hex4(raw, i + 2);
          if (unit === 0) return 'nul';
          if (unit >= 0xdc00 && unit <= 0xdfff) {
            if (!wantLow) return 'lone_surrogate';
            wantLow = false;
          } else if (wantLow) {
            return 'lone_surrogate';
          } else if (unit >= 0xd800 && unit <= 0xdbff) {
            wantLow = true;
          }
          i += 5;
          continue;
        }
        if (wantLow) return 'lone_surrogate';
        i++; // the escaped character, which may be a quote
        continue;
      }
      if (wantLow) return 'lone_surrogate';
      if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > maxDepth) return 'too_deep';
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return null;
}

/** The value of four hex digits at `at`, or -1 (malformed: JSON.parse will refuse it). */
function hex4(raw: Uint8Array, at: number): number {
  let v = 0;
  for (let k = at; k < at + 4; k++) {
    const c = raw[k];
    if (c === undefined) return -1;
    const d = c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : c >= 0x41 && c <= 0x46 ? c - 0x37 : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

/** True when `s` holds no NUL and no unpaired surrogate. */
export const isCleanString = isStorableText;

/** Throws a 400 naming `where` when a string (or a string in an array) is not clean. */
export function assertCleanStrings(values: Record<string, unknown>, where: string): void {
  for (const k in values) {
    const v = values[k];
    if (!isCleanString(k)) throw dirty(where);
    if (typeof v === 'string') {
      if (!isCleanString(v)) throw dirty(`${where}.${k}`);
    } else if (Array.isArray(v)) {
      for (const item of v) if (typeof item === 'string' && !isCleanString(item)) throw dirty(`${where}.${k}`);
    }
  }
}

/** After coercion, path and query numbers must be finite (ajv lets a coerced `1e309` past its bounds). */
export function assertFiniteNumbers(values: unknown, where: string): void {
  if (typeof values !== 'object' || values === null) return;
  for (const [k, v] of Object.entries(values)) {
    if (typeof v === 'number' && !Number.isFinite(v))
      throw new InvalidRequestError(`Invalid request: ${where}.${k} must be a finite number`);
    if (Array.isArray(v))
      for (const item of v)
        if (typeof item === 'number' && !Number.isFinite(item))
          throw new InvalidRequestError(`Invalid request: ${where}.${k} must be a finite number`);
  }
}

/** The 400 for a JSON scan problem. */
export function jsonProblemError(problem: JsonScanProblem, maxDepth: number): InvalidRequestError {
  if (problem === 'too_deep') return new InvalidRequestError(`Invalid request: body nests deeper than ${maxDepth} levels`);
  return dirty('body');
}

function dirty(where: string): InvalidRequestError {
  return new InvalidRequestError(`Invalid request: ${where} contains a NUL character or an unpaired surrogate`);
}
