import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { storageFixture } from './helpers.js';

const enc = (s: string) => new TextEncoder().encode(s);

describe('session files (PostgreSQL)', () => {
  it('writes, reads, lists, moves, copies, greps and deletes with parents created', async (t) => {
    const fx = await storageFixture(t);
    const { files } = fx.storage.forSession(await fx.session());
    const w = await files.write('/a/b/c.txt', enc('hello\nworld\n'));
    assert.equal(w.created, true);
    assert.equal(w.record.size_bytes, 12);
    assert.match(w.record.etag!, /^"[0-9a-f]{64}"$/);
    assert.equal(w.record.content_type, 'text/plain; charset=utf-8');
    assert.equal((await files.stat('/a'))!.is_directory, true);
    assert.equal((await files.stat('/a/b'))!.is_directory, true);
    assert.deepEqual(
      (await files.list('/')).map((f) => f.path),
      ['/a'],
    );
    assert.deepEqual(
      (await files.list('/', { recursive: true })).map((f) => f.path),
      ['/a', '/a/b', '/a/b/c.txt'],
    );
    const again = await files.write('/a/b/c.txt', enc('hello again'));
    assert.equal(again.created, false);
    assert.equal((await files.read('/a/b/c.txt')).content.toString(), 'hello again');

    await files.copy('/a', '/z');
    assert.deepEqual(
      (await files.list('/z', { recursive: true })).map((f) => f.path),
      ['/z/b', '/z/b/c.txt'],
    );
    await files.move('/z/b', '/y/q');
    assert.deepEqual(
      (await files.list('/', { recursive: true })).map((f) => f.path),
      ['/a', '/a/b', '/a/b/c.txt', '/y', '/y/q', '/y/q/c.txt', '/z'],
    );
    await assert.rejects(files.move('/a', '/y'), { status: 409 });
    await assert.rejects(files.move('/a', '/a/b/x'), { status: 422 });

    const hits = await files.grep('again', {});
    assert.deepEqual(hits, [
      { path: '/a/b/c.txt', matches: [{ path: '/a/b/c.txt', line_number: 1, line: 'hello again' }] },
      { path: '/y/q/c.txt', matches: [{ path: '/y/q/c.txt', line_number: 1, line: 'hello again' }] },
    ]);
    assert.equal((await files.grep('again', { path: '/y' })).length, 1);
    assert.equal((await files.grep('again', { path_pattern: 'y/**' })).length, 1);
    assert.equal((await files.grep('again', { path_pattern: '*.md' })).length, 0);

    await assert.rejects(files.delete('/a'), { status: 409 });
    await files.delete('/a', { recursive: true });
    assert.equal(await files.stat('/a/b/c.txt'), null);
    await assert.rejects(files.read('/a/b/c.txt'), { status: 404 });
  });

  it('refuses writes, moves and deletes of read-only files with 403; copies are writable', async (t) => {
    const fx = await storageFixture(t);
    const { files } = fx.storage.forSession(await fx.session());
    await files.write('/mnt/ro.txt', enc('mounted'), { readonly: true });
    await assert.rejects(files.write('/mnt/ro.txt', enc('x')), { status: 403 });
    await assert.rejects(files.delete('/mnt/ro.txt'), { status: 403 });
    await assert.rejects(files.delete('/mnt', { recursive: true }), { status: 403 });
    await assert.rejects(files.move('/mnt/ro.txt', '/elsewhere.txt'), { status: 403 });
    const copy = await files.copy('/mnt/ro.txt', '/copy.txt');
    assert.equal(copy.is_readonly, false);
    await files.write('/other.txt', enc('x'));
    await assert.rejects(files.move('/other.txt', '/mnt/ro.txt', { overwrite: true }), { status: 403 });
  });

  it('enforces the quota at the exact boundary, also for copies, and the per-file limit', async (t) => {
    const fx = await storageFixture(t, { fsQuotaBytes: 100 });
    const { files } = fx.storage.forSession(await fx.session());
    await files.write('/a.bin', new Uint8Array(60));
    await assert.rejects(files.write('/b.bin', new Uint8Array(41)), { status: 413 });
    await files.write('/b.bin', new Uint8Array(40));
    assert.equal(await files.usedBytes(), 100);
    await files.write('/a.bin', new Uint8Array(60)); // replacing counts the old size out
    await assert.rejects(files.copy('/b.bin', '/c.bin'), { status: 413 });
    await files.delete('/b.bin');
    await assert.rejects(files.write('/d.bin', new Uint8Array(11), { maxFileBytes: 10 }), { status: 413 });
    await files.write('/d.bin', new Uint8Array(10), { maxFileBytes: 10 });
  });

  it('keeps sessions apart and rejects unnormalised paths', async (t) => {
    const fx = await storageFixture(t);
    const one = fx.storage.forSession(await fx.session()).files;
    const two = fx.storage.forSession(await fx.session()).files;
    await one.write('/secret.txt', enc('one'));
    assert.equal(await two.stat('/secret.txt'), null);
    assert.deepEqual(await two.list('/'), []);
    for (const bad of ['/a/../b', 'relative', '/a\u0000b', '/a//b', '/a/']) {
      await assert.rejects(one.write(bad, enc('x')), { status: 400 }, bad);
    }
  });
});
