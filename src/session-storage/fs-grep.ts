import type { GrepResult } from '../capabilities/index.js';
import type { TextMatcher } from '../offthread/index.js';
import { bytes, type StorageDb } from './sql.js';

/** Files fetched per query while grepping. */
const GREP_BATCH = 25;
/**
 * A file is read this many bytes at a time: decoding one database row holds the event loop for
 * as long as its size (about 25 ms per MB of bytea), so a 100 MB file read whole would stall
 * every other request of the instance. Lines go to the matcher's worker about this many characters at a time.
 */
const SLICE_BYTES = 256 * 1024;
/**
 * A longer line is matched (and returned) on its first this many characters only: RE2 is linear in the input
 * but its constant grows with the pattern (up to MAX_PROGRAM_SIZE steps per character), so one
 * 100 MB single-line file must not hold a worker for minutes, nor one line overshoot the search's deadline far.
 */
export const MAX_GREP_LINE_CHARS = 16 * 1024;

/** Thrown inside a file's search when it turns out binary (a NUL byte or invalid UTF-8). */
class BinaryFile extends Error {}

type Matches = GrepResult['matches'];

/** Lines of one or more files waiting to be matched in one job; matches land in `found`, by path, in order. */
class PendingLines {
  #lines: { path: string; line_number: number; line: string }[] = [];
  chars = 0;

  constructor(
    private readonly matcher: TextMatcher,
    private readonly found: Map<string, Matches>,
  ) {}

  add(path: string, line_number: number, line: string): void {
    this.#lines.push({ path, line_number, line });
    this.chars += line.length + 1;
  }

  /** Matches the waiting lines (at most `max` matches); returns how many matched. */
  async flush(max: number): Promise<number> {
    const lines = this.#lines;
    this.#lines = [];
    this.chars = 0;
    const hits = await this.matcher.match(
      lines.map((l) => l.line),
      max,
    );
    for (const i of hits) {
      const hit = lines[i]!;
      let matches = this.found.get(hit.path);
      if (!matches) this.found.set(hit.path, (matches = []));
      matches.push(hit);
    }
    return hits.length;
  }

  /** Forgets the waiting lines of `path` (a file found binary). */
  drop(path: string): void {
    this.#lines = this.#lines.filter((l) => l.path !== path);
    this.chars = this.#lines.reduce((sum, l) => sum + l.line.length + 1, 0);
  }
}

/**
 * Searches the given files line by line, in order, reading their contents in slices and
 * matching them on the matcher's worker; binary files (NUL bytes or invalid UTF-8 before the
 * search of the file ends) are skipped. Stops after `max` matches in total.
 */
export async function grepContents(
  db: StorageDb,
  candidates: { id: string; path: string }[],
  matcher: TextMatcher,
  max: number,
): Promise<GrepResult[]> {
  const found = new Map<string, Matches>();
  const pending = new PendingLines(matcher, found);
  let left = max;
  const flush = async (whenChars: number) => {
    if (pending.chars > whenChars && left > 0) left -= await pending.flush(left);
  };
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
      const lines = new LineSplitter();
      try {
        const size = Number(row.size);
        let part = bytes(row.head);
        for (let offset = 0; ; ) {
          for (const [line, n] of lines.push(part)) pending.add(c.path, n, line);
          await flush(SLICE_BYTES);
          offset += part.length;
          if (offset >= size || left <= 0) break;
          part = await readSlice(db, c.id, offset);
          if (part.length === 0) break;
        }
        if (left > 0) for (const [line, n] of lines.end()) pending.add(c.path, n, line);
      } catch (err) {
        if (!(err instanceof BinaryFile)) throw err;
        pending.drop(c.path);
        left += found.get(c.path)?.length ?? 0;
        found.delete(c.path);
      }
      if (left <= 0) break;
    }
    await flush(SLICE_BYTES);
  }
  await flush(0);
  return [...found].map(([path, matches]) => ({ path, matches }));
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
