import { Type } from '@sinclair/typebox';
import { defineTool, jsonResult } from '../define.js';
import type { FileStat, SessionFs } from '../storage-ports.js';
import { ToolError } from '../types.js';
import { normalizeSessionPath } from './paths.js';
import { clip, decodeText } from './text.js';

export const DEFAULT_READ_LINES = 2000;
export const MAX_READ_CHARS = 256 * 1024;
export const MAX_LIST_ENTRIES = 1000;
export const MAX_GREP_MATCHES = 200;
const MAX_LINE_CHARS = 2000;

const PathArg = Type.String({ minLength: 1, description: 'Absolute path, e.g. /notes/plan.md (/workspace/notes/plan.md also works).' });

export const readFile = defineTool({
  name: 'read_file',
  display_name: 'Read File',
  description: `Reads a text file. Returns metadata and up to ${DEFAULT_READ_LINES} lines; use offset/limit to page through longer files.`,
  parameters: Type.Object(
    {
      path: PathArg,
      offset: Type.Optional(Type.Integer({ minimum: 1, description: 'First line to return, 1-based. Default 1.' })),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10000, description: `Number of lines. Default ${DEFAULT_READ_LINES}.` })),
    },
    { additionalProperties: false },
  ),
  async run(args, { fs }) {
    const path = normalizeSessionPath(args.path);
    const { stat, content } = await fs.read(path);
    const text = decodeText(content);
    if (text === null) {
      return jsonResult({ path, size_bytes: stat.size_bytes, binary: true, note: 'Binary file; content not shown.' });
    }
    const lines = text.split('\n');
    const start = Math.min(args.offset ?? 1, lines.length + 1);
    const wanted = lines.slice(start - 1, start - 1 + (args.limit ?? DEFAULT_READ_LINES)).map((l) => clip(l, MAX_LINE_CHARS));
    const [shown, cut] = fitChars(wanted, MAX_READ_CHARS);
    const end = start - 1 + shown.length;
    const meta = {
      path,
      size_bytes: stat.size_bytes,
      total_lines: lines.length,
      start_line: start,
      end_line: end,
      truncated: end < lines.length || cut,
    };
    return jsonResult(meta, { type: 'text', text: shown.join('\n') });
  },
});

function fitChars(lines: string[], max: number): [string[], boolean] {
  let total = 0;
  for (let i = 0; i < lines.length; i++) {
    total += lines[i]!.length + 1;
    if (total > max) return [lines.slice(0, Math.max(i, 1)), true];
  }
  return [lines, false];
}

export const statFile = defineTool({
  name: 'stat_file',
  display_name: 'File Info',
  description: 'Returns metadata of a file or directory: size, type, read-only flag, timestamps.',
  parameters: Type.Object({ path: PathArg }, { additionalProperties: false }),
  async run(args, { fs }) {
    return jsonResult(await mustStat(fs, normalizeSessionPath(args.path)));
  },
});

export const listDirectory = defineTool({
  name: 'list_directory',
  display_name: 'List Directory',
  description: `Lists a directory (default: the workspace root). With recursive, all descendants. At most ${MAX_LIST_ENTRIES} entries.`,
  parameters: Type.Object(
    {
      path: Type.Optional(Type.String({ description: 'Directory path. Default: / (the workspace root).' })),
      recursive: Type.Optional(Type.Boolean({ description: 'Include all descendants. Default false.' })),
    },
    { additionalProperties: false },
  ),
  async run(args, { fs }) {
    const path = normalizeSessionPath(args.path || '/');
    if (path !== '/') {
      const stat = await mustStat(fs, path);
      if (!stat.is_directory) throw new ToolError(`${path} is a file, not a directory; use read_file or stat_file.`);
    }
    const all = await fs.list(path, { recursive: args.recursive === true });
    const entries = all.slice(0, MAX_LIST_ENTRIES).map(entryView);
    return jsonResult({ path, entries, total: all.length, truncated: all.length > MAX_LIST_ENTRIES });
  },
});

function entryView(s: FileStat) {
  return {
    path: s.path,
    name: s.name,
    is_directory: s.is_directory,
    size_bytes: s.size_bytes,
    is_readonly: s.is_readonly,
    updated_at: s.updated_at,
  };
}

export const grepFiles = defineTool({
  name: 'grep_files',
  display_name: 'Search Files',
  description: `Searches text files line by line with a regular expression (RE2 syntax: no backreferences or lookaround; large repeat counts make a pattern too complex). At most ${MAX_GREP_MATCHES} matches; a search that runs too long stops with an error: narrow it with path or path_pattern.`,
  parameters: Type.Object(
    {
      pattern: Type.String({ minLength: 1, maxLength: 1000, description: 'Regular expression, e.g. "TODO|FIXME".' }),
      path: Type.Optional(Type.String({ description: 'Only search under this directory. Default: /.' })),
      path_pattern: Type.Optional(Type.String({ maxLength: 1024, description: 'Glob on file paths, e.g. "**/*.md".' })),
      ignore_case: Type.Optional(Type.Boolean({ description: 'Case-insensitive. Default false.' })),
    },
    { additionalProperties: false },
  ),
  // A bad or too complex pattern, or a search past its time limit, is a 4xx of fs.grep: a ToolError (define.ts).
  async run(args, { fs }) {
    const results = await fs.grep(args.pattern, {
      path: normalizeSessionPath(args.path || '/'),
      ...(args.path_pattern ? { path_pattern: args.path_pattern } : {}),
      ignore_case: args.ignore_case === true,
      max_matches: MAX_GREP_MATCHES + 1,
    });
    return jsonResult(capMatches(results));
  },
});

function capMatches(results: Awaited<ReturnType<SessionFs['grep']>>) {
  let left = MAX_GREP_MATCHES;
  let total = 0;
  const files = [];
  for (const r of results) {
    total += r.matches.length;
    if (left <= 0) continue;
    const matches = r.matches.slice(0, left).map((m) => ({ line_number: m.line_number, line: clip(m.line, 500) }));
    left -= matches.length;
    files.push({ path: r.path, matches });
  }
  return { results: files, match_count: Math.min(total, MAX_GREP_MATCHES), truncated: total > MAX_GREP_MATCHES };
}

/** The stat, or a ToolError naming the missing path. */
export async function mustStat(fs: SessionFs, path: string): Promise<FileStat> {
  const stat = await fs.stat(path);
  if (!stat) throw new ToolError(`No such file or directory: ${path}`);
  return stat;
}
