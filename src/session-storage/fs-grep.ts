import { setImmediate as nextTurn } from 'node:timers/promises';
import type { GrepResult } from '../capabilities/index.js';
import type { LinearRegex } from '../patterns/index.js';
import { bytes, type StorageDb } from './sql.js';

/** Files fetched per query while grepping. */
const GREP_BATCH = 25;
/**
 * A longer line is matched (and returned) on its first this many characters only: RE2 is linear in the input
 * but its constant grows with the pattern (a 1000-character pattern costs up to a few µs per
 * character), so one 100 MB single-line file must not hold the event loop for minutes.
 */
export const MAX_GREP_LINE_CHARS = 16 * 1024;
/** Matching yields to the event loop after this much work, so other requests keep being served. */
const GREP_SLICE_MS = 5;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Searches the given files line by line, in order, loading their contents in batches; binary
 * files (NUL bytes or invalid UTF-8) are skipped. Stops after `max` matches in total.
 */
export async function grepContents(
  db: StorageDb,
  candidates: { id: string; path: string }[],
  re: LinearRegex,
  max: number,
): Promise<GrepResult[]> {
  const results: GrepResult[] = [];
  let left = max;
  let sliceStart = performance.now();
  for (let i = 0; i < candidates.length && left > 0; i += GREP_BATCH) {
    const batch = candidates.slice(i, i + GREP_BATCH);
    const rows = await db.sql<{ id: string; content: unknown }>(
      `select id, content from session_files where id in (${batch.map(() => '?').join(', ')})`,
      batch.map((c) => c.id),
    );
    const byId = new Map(rows.map((r) => [r.id, bytes(r.content)]));
    for (const c of batch) {
      const text = decodeText(byId.get(c.id));
      if (text === null) continue;
      const matches = [];
      const lines = text.split('\n');
      for (let n = 0; n < lines.length && left > 0; n++) {
        if (performance.now() - sliceStart > GREP_SLICE_MS) {
          await nextTurn();
          sliceStart = performance.now();
        }
        const whole = lines[n]!.replace(/\r$/, '');
        const line = whole.length > MAX_GREP_LINE_CHARS ? whole.slice(0, MAX_GREP_LINE_CHARS) : whole;
        if (!re.test(line)) continue;
        matches.push({ path: c.path, line_number: n + 1, line });
        left--;
      }
      if (matches.length) results.push({ path: c.path, matches });
      if (left <= 0) break;
    }
  }
  return results;
}

function decodeText(content: Buffer | undefined): string | null {
  if (!content || content.includes(0)) return null;
  try {
    return utf8.decode(content);
  } catch {
    return null;
  }
}
