import { setImmediate as nextTurn } from 'node:timers/promises';
import type { GrepResult } from '../capabilities/index.js';
import type { LinearRegex } from '../patterns/index.js';
import { bytes, type StorageDb } from './sql.js';

/** Files fetched per query while grepping. */
const GREP_BATCH = 25;
/**
 * A file is read this many bytes at a time: decoding one database row holds the event loop for
 * as long as its size (about 25 ms per MB of bytea), so a 100 MB file read whole would stall
 * every other request of the instance.
 */
const SLICE_BYTES = 256 * 1024;
/**
 * A longer line is matched (and returned) on its first this many characters only: RE2 is linear in the input
 * but its constant grows with the pattern (a 1000-character pattern costs up to a few µs per
 * character), so one 100 MB single-line file must not hold the event loop for minutes.
 */
export const MAX_GREP_LINE_CHARS = 16 * 1024;
/**
 * Matching yields to the event loop after this much work in one turn of the loop, counted over
 * every grep in flight: concurrent greps share the slice instead of taking one each, so however
 * many run, requests waiting behind them wait for about one slice per turn.
 */
const GREP_SLICE_MS = 5;
let turnStart = performance.now();
let nextGrepTurn: Promise<void> | null = null;

async function yieldIfDue(): Promise<void> {
  if (performance.now() - turnStart <= GREP_SLICE_MS) return;
  nextGrepTurn ??= nextTurn().then(() => {
    nextGrepTurn = null;
    turnStart = performance.now();
  });
  await nextGrepTurn;
}

/** Thrown inside a file's search when it turns out binary (a NUL byte or invalid UTF-8). */
class BinaryFile extends Error {}

/**
 * Searches the given files line by line, in order, reading their contents in slices; binary
 * files (NUL bytes or invalid UTF-8 before the search of the file ends) are skipped. Stops after
 * `max` matches in total.
 */
export async function grepContents(
  db: StorageDb,
  candidates: { id: string; path: string }[],
  re: LinearRegex,
  max: number,
): Promise<GrepResult[]> {
  const results: GrepResult[] = [];
  let left = max;
  for (let i = 0; i < candidates.length && left > 0; i += GREP_BATCH) {
    const batch = candidates.slice(i, i + GREP_BATCH);
    const rows = await db.sql<{ id: string; head: unknown; size: number | string }>(
      `select id, substring(content from 1 for ?) as head, length(content) as size
       from session_files where id in (${batch.map(() => '?').join(', ')})`,
      [SLICE_BYTES, ...batch.map((c) => c.id)],
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const c of batch) {
      const row = byId.get(c.id);
      if (!row) continue;
      const matches: GrepResult['matches'] = [];
      const lines = new LineSplitter();
      const test = async (line: string, n: number) => {
        await yieldIfDue();
        if (matches.length < left && re.test(line)) matches.push({ path: c.path, line_number: n, line });
      };
      try {
        const size = Number(row.size);
        let part = bytes(row.head);
        for (let offset = 0; ; ) {
          for (const [line, n] of lines.push(part)) await test(line, n);
          offset += part.length;
          if (offset >= size || matches.length >= left) break;
          part = await readSlice(db, c.id, offset);
          if (part.length === 0) break;
        }
        if (matches.length < left) for (const [line, n] of lines.end()) await test(line, n);
      } catch (err) {
        if (err instanceof BinaryFile) continue;
        throw err;
      }
      if (matches.length) results.push({ path: c.path, matches });
      left -= matches.length;
      if (left <= 0) break;
    }
  }
  return results;
}

async function readSlice(db: StorageDb, id: string, offset: number): Promise<Buffer> {
  const [row] = await db.sql<{ part: unknown }>(`select substring(content from ? for ?) as part from session_files where id = ?`, [
    offset + 1,
    SLICE_BYTES,
    id,
  ]);
  return row ? bytes(row.part) : Buffer.alloc(0);
}

/**
 * Splits a file's bytes, given in slices, into numbered lines (without `\r\n` / `\n`), each cut
 * to its first MAX_GREP_LINE_CHARS characters; throws BinaryFile on a NUL byte or invalid UTF-8.
 */
export class LineSplitter {
  readonly #utf8 = new TextDecoder('utf-8', { fatal: true });
  #carry = '';
  #lineNumber = 0;

  push(part: Buffer): [string, number][] {
    if (part.includes(0)) throw new BinaryFile();
    return this.#split(this.#decode(part, true), false);
  }

  end(): [string, number][] {
    return this.#split(this.#decode(undefined, false), true);
  }

  #decode(part: Buffer | undefined, stream: boolean): string {
    try {
      return this.#utf8.decode(part, { stream });
    } catch {
      throw new BinaryFile();
    }
  }

  #split(text: string, last: boolean): [string, number][] {
    const pieces = text.split('\n');
    pieces[0] = this.#carry + pieces[0];
    // The unfinished last piece waits for the next slice; one longer than a line is ever matched on is cut now.
    const open = last ? undefined : pieces.pop();
    this.#carry = open === undefined ? '' : open.slice(0, MAX_GREP_LINE_CHARS + 1);
    return pieces.map((whole) => {
      const line = whole.replace(/\r$/, '');
      return [line.length > MAX_GREP_LINE_CHARS ? line.slice(0, MAX_GREP_LINE_CHARS) : line, ++this.#lineNumber];
    });
  }
}
