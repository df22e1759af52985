/**
 * Secret values never reach the transcript: a tool result (or error text) that contains one of the
 * session's secret values gets `[secret:NAME]` in its place before it is recorded, streamed or sent
 * to the LLM. A server can echo a value transformed, so besides the value as is (and escaped inside
 * JSON) the redaction finds, for values of MIN_ENCODED_SECRET_CHARS or more: any letter case, the
 * value spelled with separators between its characters (`s e c r e t`, `s-e-c-r-e-t`), and the
 * forms of secret-encodings.ts (base64, hex, reversed, URL-encoded) in any case and spacing.
 * Every table is one Aho–Corasick automaton, so a text costs time linear in its length however
 * many secrets the session has. Pure; the act step loads the values.
 */
import { buildNeedleSet, type NeedleSet } from '../../../src/patterns/index.js';
import { encodedForms } from './secret-encodings.js';

export interface SecretValue {
  name: string;
  value: string;
}

/** Shorter values are not redacted: they would match ordinary text everywhere. */
export const MIN_REDACTED_SECRET_CHARS = 4;
/** Shorter values are redacted only as they are: their encodings and spellings are too likely by chance. */
export const MIN_ENCODED_SECRET_CHARS = 8;
/**
 * Longer values (certificates, keys) are redacted only as they are, found by plain search:
 * the automaton would hold every form of every character of them.
 */
export const MAX_ENCODED_SECRET_CHARS = 1024;

/** Characters a value may be spelled apart with; dropped from text and forms before the loose match. */
const SEPARATOR = new Uint8Array(128);
for (const c of ' \t\n\r-_.,:;|/') SEPARATOR[c.charCodeAt(0)] = 1;

export interface RedactionTable {
  /** Values and their JSON-escaped forms, exact. */
  exact: NeedleSet<string>;
  /** Every form, folded to ASCII lower case with separators dropped; matched against the text folded the same way. */
  loose: NeedleSet<string>;
  /** Values too long for the automaton, with their markers. */
  long: { needle: string; marker: string }[];
  /** No secret long enough to redact: texts pass untouched, without a scan. */
  empty: boolean;
}

/** `text` as code units, ASCII letters folded to lower case and separators dropped, with each kept unit's index. */
function looseUnits(text: string): { units: Uint16Array; at: Uint32Array; length: number } {
  const units = new Uint16Array(text.length);
  const at = new Uint32Array(text.length);
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 128 && SEPARATOR[c] === 1) continue;
    units[n] = c >= 0x41 && c <= 0x5a ? c + 0x20 : c;
    at[n++] = i;
  }
  return { units: units.subarray(0, n), at: at.subarray(0, n), length: n };
}

function codeUnits(s: string): Uint16Array {
  const units = new Uint16Array(s.length);
  for (let i = 0; i < s.length; i++) units[i] = s.charCodeAt(i);
  return units;
}

/** The JSON-escaped form of a value, when it differs from the value. */
function jsonEscaped(value: string): string | undefined {
  const escaped = JSON.stringify(value).slice(1, -1);
  return escaped === value ? undefined : escaped;
}

/** The matchers for a session's secrets. */
export function redactionTable(secrets: readonly SecretValue[]): RedactionTable {
  const exact: { needle: Uint16Array; label: string }[] = [];
  const loose: { needle: Uint16Array; label: string }[] = [];
  const long: { needle: string; marker: string }[] = [];
  for (const { name, value } of secrets) {
    if (value.length < MIN_REDACTED_SECRET_CHARS) continue;
    const marker = `[secret:${name}]`;
    const escaped = jsonEscaped(value);
    if (value.length > MAX_ENCODED_SECRET_CHARS) {
      long.push({ needle: value, marker });
      if (escaped) long.push({ needle: escaped, marker });
      continue;
    }
    exact.push({ needle: codeUnits(value), label: marker });
    if (escaped) exact.push({ needle: codeUnits(escaped), label: marker });
    if (value.length < MIN_ENCODED_SECRET_CHARS) continue;
    for (const form of [value, ...encodedForms(value)]) {
      const folded = looseUnits(form).units;
      if (folded.length >= MIN_ENCODED_SECRET_CHARS) loose.push({ needle: folded, label: marker });
    }
  }
  long.sort((a, b) => b.needle.length - a.needle.length);
  const empty = exact.length === 0 && long.length === 0;
  return { exact: buildNeedleSet(exact), loose: buildNeedleSet(loose), long, empty };
}

/** `text` with every found secret replaced by its marker; overlapping finds merge into one marker. */
export function redactSecrets(text: string, table: RedactionTable): string {
  if (table.empty) return text;
  let out = text;
  for (const { needle, marker } of table.long) if (out.includes(needle)) out = out.split(needle).join(marker);
  // Spans as a coverage count per position (+1 at a start, -1 after an end) and a marker per start.
  const delta = new Int32Array(out.length + 1);
  const markerAt = new Map<number, string>();
  const cover = (start: number, end: number, marker: string) => {
    delta[start]!++;
    delta[end]!--;
    if (!markerAt.has(start)) markerAt.set(start, marker);
  };
  let any = false;
  table.exact.scan(codeUnits(out), (start, end, marker) => {
    any = true;
    cover(start, end, marker);
  });
  const folded = looseUnits(out);
  if (folded.length > 0)
    table.loose.scan(folded.units, (start, end, marker) => {
      any = true;
      cover(folded.at[start]!, folded.at[end - 1]! + 1, marker);
    });
  if (!any) return out;
  let result = '';
  let depth = 0;
  let copiedTo = 0;
  for (let i = 0; i <= out.length; i++) {
    const before = depth;
    depth += delta[i]!;
    if (before === 0 && depth > 0) {
      result += out.slice(copiedTo, i) + markerAt.get(i)!;
    } else if (before > 0 && depth === 0) {
      copiedTo = i;
    }
  }
  return result + out.slice(copiedTo);
}
