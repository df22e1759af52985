/**
 * A transcript as stored text and back (session snapshots, docs/decisions/0099-session-snapshots.md).
 * Generic over the entries: whatever plain data, Maps and Sets a Transcript holds (other folds, such
 * as a compaction's summary entry, add entry kinds) round-trips without this file knowing them.
 * FOLD_VERSION names the shape `extendTranscript` produces: a change to that shape or to what the
 * fold keeps raises it, and a snapshot of another version is ignored and rebuilt from the log.
 */
import type { Transcript } from './transcript.js';

/** Raise on any change to what the fold keeps or how it keeps it (transcript.ts). */
export const FOLD_VERSION = 2;

const MAP = '$map';
const SET = '$set';

/**
 * Maps and Sets become `{"$map": [...]}` / `{"$set": [...]}`. Stored content (tool arguments, a
 * user's JSON) may have keys like those: every key starting with `$` gets one more on the way
 * out and loses it on the way in, so only the tags themselves read as tags.
 */
function replacer(_key: string, value: unknown): unknown {
  if (value instanceof Map) return { [MAP]: [...value] };
  if (value instanceof Set) return { [SET]: [...value] };
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const keys = Object.keys(value);
  if (!keys.some((k) => k.startsWith('$'))) return value;
  return Object.fromEntries(keys.map((k) => [k.startsWith('$') ? `$${k}` : k, (value as Record<string, unknown>)[k]]));
}

function reviver(_key: string, value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const keys = Object.keys(value);
  const v = value as Record<string, unknown>;
  if (keys.length === 1 && keys[0] === MAP) return new Map(v[MAP] as [unknown, unknown][]);
  if (keys.length === 1 && keys[0] === SET) return new Set(v[SET] as unknown[]);
  if (!keys.some((k) => k.startsWith('$'))) return value;
  return Object.fromEntries(keys.map((k) => [k.startsWith('$$') ? k.slice(1) : k, v[k]]));
}

export function encodeTranscript(t: Transcript): string {
  return JSON.stringify(t, replacer);
}

/** The transcript in `text`; null when it is not one (then the log is folded instead). */
export function decodeTranscript(text: string): Transcript | null {
  let t: unknown;
  try {
    t = JSON.parse(text, reviver);
  } catch {
    return null;
  }
  if (t === null || typeof t !== 'object') return null;
  const { sequence, entries, usage } = t as Partial<Transcript>;
  if (!Number.isSafeInteger(sequence) || !Array.isArray(entries) || usage === null || typeof usage !== 'object') return null;
  return t as Transcript;
}
