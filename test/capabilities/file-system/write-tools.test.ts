import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sessionFileSystemCapability } from '../../../src/capabilities/file-system/capability.js';
import { ToolError } from '../../../src/capabilities/types.js';
import { createFakeToolContext, jsonOf, toolOf } from '../fakes.js';

const tool = (name: string) => toolOf(sessionFileSystemCapability, name);
const isToolError = (pattern: RegExp) => (e: unknown) => e instanceof ToolError && pattern.test(e.message);

describe('write_file', () => {
  it('creates a file with parents, then overwrites it', async () => {
    const ctx = createFakeToolContext();
    assert.deepEqual(jsonOf(await tool('write_file').execute({ path: '/workspace/out/r.md', content: '# Hi' }, ctx)), {
      path: '/out/r.md',
      size_bytes: 4,
      created: true,
    });
    assert.deepEqual(jsonOf(await tool('write_file').execute({ path: '/out/r.md', content: 'é' }, ctx)), {
      path: '/out/r.md',
      size_bytes: 2,
      created: false,
    });
    assert.equal(ctx.fs.text('/out/r.md'), 'é');
    assert.equal((await ctx.fs.stat('/out'))!.is_directory, true);
  });

  it('enforces the configured maximum file size in bytes', async () => {
    const ctx = createFakeToolContext({ config: { max_file_size: 10 } });
    await tool('write_file').execute({ path: '/ok.txt', content: '0123456789' }, ctx);
    await assert.rejects(
      tool('write_file').execute({ path: '/big.txt', content: '01234567890' }, ctx),
      isToolError(/11 bytes; the maximum file size is 10 bytes/),
    );
    assert.equal(ctx.fs.text('/big.txt'), undefined);
  });

  it('refuses read-only files and the root', async () => {
    const ctx = createFakeToolContext();
    ctx.fs.seed('/mounted.md', 'x', { readonly: true });
    await assert.rejects(tool('write_file').execute({ path: '/mounted.md', content: 'y' }, ctx), isToolError(/read-only/));
    await assert.rejects(tool('write_file').execute({ path: '/', content: 'y' }, ctx), isToolError(/not the workspace root/));
  });
});

describe('edit_file', () => {
  it('replaces a unique exact string', async () => {
    const ctx = createFakeToolContext();
    ctx.fs.seed('/a.ts', 'const a = 1;\nconst b = 2;\n');
    const out = jsonOf(await tool('edit_file').execute({ path: '/a.ts', old_string: 'const b = 2;', new_string: 'const b = $&3;' }, ctx));
    assert.deepEqual(out, { path: '/a.ts', replacements: 1, size_bytes: 28 });
    assert.equal(ctx.fs.text('/a.ts'), 'const a = 1;\nconst b = $&3;\n');
  });

  it('refuses an ambiguous match unless replace_all is set', async () => {
    const ctx = createFakeToolContext();
    ctx.fs.seed('/a.txt', 'x y x y x');
    await assert.rejects(
      tool('edit_file').execute({ path: '/a.txt', old_string: 'x', new_string: 'z' }, ctx),
      isToolError(/occurs 3 times/),
    );
    assert.equal(ctx.fs.text('/a.txt'), 'x y x y x');
    assert.equal(
      jsonOf(await tool('edit_file').execute({ path: '/a.txt', old_string: 'x', new_string: 'z', replace_all: true }, ctx))['replacements'],
      3,
    );
    assert.equal(ctx.fs.text('/a.txt'), 'z y z y z');
  });

  it('refuses a missing string, a no-op, a missing file, binary content and an oversize result', async () => {
    const ctx = createFakeToolContext({ config: { max_file_size: 12 } });
    ctx.fs.seed('/a.txt', 'hello world');
    await ctx.fs.write('/b.bin', new Uint8Array([0, 1, 2]));
    const edit = (args: Record<string, unknown>) => tool('edit_file').execute(args, ctx);
    await assert.rejects(edit({ path: '/a.txt', old_string: 'Hello', new_string: 'x' }), isToolError(/was not found in \/a.txt/));
    await assert.rejects(edit({ path: '/a.txt', old_string: 'hello', new_string: 'hello' }), isToolError(/identical/));
    await assert.rejects(edit({ path: '/none.txt', old_string: 'a', new_string: 'b' }), isToolError(/File not found/));
    await assert.rejects(edit({ path: '/b.bin', old_string: 'a', new_string: 'b' }), isToolError(/binary file/));
    await assert.rejects(edit({ path: '/a.txt', old_string: 'world', new_string: 'everyone' }), isToolError(/maximum file size is 12/));
    await assert.rejects(edit({ path: '/a.txt', old_string: '', new_string: 'b' }), isToolError(/old_string/));
    assert.equal(ctx.fs.text('/a.txt'), 'hello world');
  });
});

describe('delete_file', () => {
  it('deletes files, and directories only with recursive', async () => {
    const ctx = createFakeToolContext();
    ctx.fs.seed('/a.txt', 'a');
    ctx.fs.seed('/d/x.txt', 'x');
    assert.deepEqual(jsonOf(await tool('delete_file').execute({ path: '/a.txt' }, ctx)), {
      path: '/a.txt',
      deleted: true,
      was_directory: false,
    });
    await assert.rejects(tool('delete_file').execute({ path: '/d' }, ctx), isToolError(/not empty/));
    await tool('delete_file').execute({ path: '/d', recursive: true }, ctx);
    assert.deepEqual(ctx.fs.paths(), []);
  });

  it('refuses missing paths, read-only files and the root', async () => {
    const ctx = createFakeToolContext();
    ctx.fs.seed('/ro.txt', 'r', { readonly: true });
    await assert.rejects(tool('delete_file').execute({ path: '/none' }, ctx), isToolError(/No such file or directory/));
    await assert.rejects(tool('delete_file').execute({ path: '/ro.txt' }, ctx), isToolError(/read-only/));
    await assert.rejects(tool('delete_file').execute({ path: '/workspace', recursive: true }, ctx), isToolError(/workspace root/));
  });
});

describe('move_file and copy_file', () => {
  it('moves a file, refusing to overwrite unless asked', async () => {
    const ctx = createFakeToolContext();
    ctx.fs.seed('/a.txt', 'a');
    ctx.fs.seed('/b.txt', 'b');
    await assert.rejects(tool('move_file').execute({ src_path: '/a.txt', dst_path: '/b.txt' }, ctx), isToolError(/Destination exists/));
    const out = jsonOf(await tool('move_file').execute({ src_path: '/a.txt', dst_path: '/b.txt', overwrite: true }, ctx));
    assert.equal(out['dst_path'], '/b.txt');
    assert.deepEqual(ctx.fs.paths(), ['/b.txt']);
    assert.equal(ctx.fs.text('/b.txt'), 'a');
  });

  it('copies a directory tree; copies of read-only files are writable', async () => {
    const ctx = createFakeToolContext();
    ctx.fs.seed('/tpl/x.md', 'x', { readonly: true });
    await tool('copy_file').execute({ src_path: '/tpl', dst_path: '/work/tpl' }, ctx);
    assert.deepEqual(ctx.fs.paths(), ['/tpl', '/tpl/x.md', '/work', '/work/tpl', '/work/tpl/x.md']);
    assert.equal((await ctx.fs.stat('/work/tpl/x.md'))!.is_readonly, false);
  });

  it('refuses same paths, moving into itself and missing sources', async () => {
    const ctx = createFakeToolContext();
    ctx.fs.seed('/d/x', 'x');
    await assert.rejects(tool('move_file').execute({ src_path: '/d', dst_path: '/workspace/d' }, ctx), isToolError(/are the same/));
    await assert.rejects(tool('copy_file').execute({ src_path: '/d', dst_path: '/d/sub' }, ctx), isToolError(/into itself/));
    await assert.rejects(
      tool('copy_file').execute({ src_path: '/none', dst_path: '/x' }, ctx),
      isToolError(/No such file or directory: \/none/),
    );
  });
});
