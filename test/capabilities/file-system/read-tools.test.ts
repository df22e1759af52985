import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sessionFileSystemCapability } from '../../../src/capabilities/file-system/capability.js';
import { ToolError } from '../../../src/capabilities/types.js';
import { createFakeToolContext, jsonOf, toolOf } from '../fakes.js';

const tool = (name: string) => toolOf(sessionFileSystemCapability, name);
const isToolError = (pattern: RegExp) => (e: unknown) => e instanceof ToolError && pattern.test(e.message);

describe('read_file', () => {
  it('returns metadata and the whole content of a small file', async () => {
    const ctx = createFakeToolContext();
    ctx.fs.seed('/notes/a.md', 'line 1\nline 2\nline 3');
    const result = await tool('read_file').execute({ path: '/workspace/notes/a.md' }, ctx);
    assert.deepEqual(jsonOf(result), { path: '/notes/a.md', size_bytes: 20, total_lines: 3, start_line: 1, end_line: 3, truncated: false });
    assert.equal(result.content[1]!.text, 'line 1\nline 2\nline 3');
  });

  it('pages with offset and limit, flagging truncation', async () => {
    const ctx = createFakeToolContext();
    ctx.fs.seed('/big.txt', Array.from({ length: 10 }, (_, i) => `L${i + 1}`).join('\n'));
    const result = await tool('read_file').execute({ path: 'big.txt', offset: 4, limit: 3 }, ctx);
    assert.deepEqual(jsonOf(result), { path: '/big.txt', size_bytes: 30, total_lines: 10, start_line: 4, end_line: 6, truncated: true });
    assert.equal(result.content[1]!.text, 'L4\nL5\nL6');
  });

  it('does not show binary files', async () => {
    const ctx = createFakeToolContext();
    await ctx.fs.write('/img.bin', new Uint8Array([0x89, 0x50, 0x00, 0xff]));
    const result = await tool('read_file').execute({ path: '/img.bin' }, ctx);
    assert.deepEqual(jsonOf(result), { path: '/img.bin', size_bytes: 4, binary: true, note: 'Binary file; content not shown.' });
    assert.equal(result.content.length, 1);
  });

  it('reports missing files, directories and escapes as tool errors', async () => {
    const ctx = createFakeToolContext();
    ctx.fs.seed('/dir/f.txt', 'x');
    await assert.rejects(tool('read_file').execute({ path: '/nope.txt' }, ctx), isToolError(/File not found: \/nope.txt/));
    await assert.rejects(tool('read_file').execute({ path: '/dir' }, ctx), isToolError(/is a directory/));
    await assert.rejects(tool('read_file').execute({ path: '../../etc/passwd' }, ctx), isToolError(/outside the workspace/));
    await assert.rejects(tool('read_file').execute({ path: '/a', offset: 0 }, ctx), isToolError(/"offset" must be >= 1/));
  });
});

describe('stat_file', () => {
  it('returns the entry metadata, or a not-found tool error', async () => {
    const ctx = createFakeToolContext();
    ctx.fs.seed('/docs/readme.md', 'hello', { readonly: true });
    const stat = jsonOf(await tool('stat_file').execute({ path: '/docs/readme.md' }, ctx));
    assert.equal(stat['is_readonly'], true);
    assert.equal(stat['size_bytes'], 5);
    assert.equal(stat['is_directory'], false);
    assert.equal(jsonOf(await tool('stat_file').execute({ path: '/docs' }, ctx))['is_directory'], true);
    await assert.rejects(tool('stat_file').execute({ path: '/missing' }, ctx), isToolError(/No such file or directory: \/missing/));
  });
});

describe('list_directory', () => {
  it('lists the root by default, one level or recursively', async () => {
    const ctx = createFakeToolContext();
    ctx.fs.seed('/a.txt', 'a');
    ctx.fs.seed('/src/main.ts', 'm');
    ctx.fs.seed('/src/lib/util.ts', 'u');
    const top = jsonOf<{ path: string; entries: { path: string; is_directory: boolean }[]; truncated: boolean }>(
      await tool('list_directory').execute({}, ctx),
    );
    assert.equal(top.path, '/');
    assert.deepEqual(
      top.entries.map((e) => [e.path, e.is_directory]),
      [
        ['/a.txt', false],
        ['/src', true],
      ],
    );
    assert.equal(top.truncated, false);
    const deep = jsonOf<{ entries: { path: string }[] }>(
      await tool('list_directory').execute({ path: '/workspace/src', recursive: true }, ctx),
    );
    assert.deepEqual(
      deep.entries.map((e) => e.path),
      ['/src/lib', '/src/lib/util.ts', '/src/main.ts'],
    );
  });

  it('refuses files and missing directories', async () => {
    const ctx = createFakeToolContext();
    ctx.fs.seed('/a.txt', 'a');
    await assert.rejects(tool('list_directory').execute({ path: '/a.txt' }, ctx), isToolError(/is a file/));
    await assert.rejects(tool('list_directory').execute({ path: '/none' }, ctx), isToolError(/No such file or directory/));
  });
});

describe('grep_files', () => {
  it('finds matching lines by regex, under a path, filtered by glob, optionally ignoring case', async () => {
    const ctx = createFakeToolContext();
    ctx.fs.seed('/src/a.ts', 'const x = 1;\n// TODO: fix\n');
    ctx.fs.seed('/src/b.md', 'todo: write docs');
    ctx.fs.seed('/other/c.ts', 'TODO elsewhere');
    const grep = (args: Record<string, unknown>) =>
      tool('grep_files')
        .execute(args, ctx)
        .then((r) =>
          jsonOf<{
            results: { path: string; matches: { line_number: number; line: string }[] }[];
            match_count: number;
            truncated: boolean;
          }>(r),
        );
    const all = await grep({ pattern: 'TODO' });
    assert.deepEqual(
      all.results.map((r) => r.path),
      ['/other/c.ts', '/src/a.ts'],
    );
    assert.deepEqual(all.results[1]!.matches, [{ line_number: 2, line: '// TODO: fix' }]);
    assert.equal(all.match_count, 2);
    assert.equal((await grep({ pattern: 'todo', ignore_case: true, path: '/src' })).match_count, 2);
    assert.deepEqual(
      (await grep({ pattern: 'todo', ignore_case: true, path_pattern: '*.md' })).results.map((r) => r.path),
      ['/src/b.md'],
    );
  });

  it('caps matches at 200 and flags truncation', async () => {
    const ctx = createFakeToolContext();
    ctx.fs.seed('/many.txt', Array.from({ length: 300 }, () => 'hit').join('\n'));
    const out = jsonOf<{ results: { matches: unknown[] }[]; match_count: number; truncated: boolean }>(
      await tool('grep_files').execute({ pattern: 'hit' }, ctx),
    );
    assert.equal(out.results[0]!.matches.length, 200);
    assert.equal(out.match_count, 200);
    assert.equal(out.truncated, true);
  });

  it('refuses an invalid regular expression', async () => {
    await assert.rejects(
      tool('grep_files').execute({ pattern: '(unclosed' }, createFakeToolContext()),
      isToolError(/Invalid regular expression/),
    );
  });
});
