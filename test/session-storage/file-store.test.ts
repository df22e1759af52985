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

  it('greps files larger than one read slice: lines and characters across slice edges, long lines cut, late NUL bytes skip the file', async (t) => {
    const fx = await storageFixture(t);
    const { files } = fx.storage.forSession(await fx.session());
    // ~1 MB: four 256 KiB slices; numbered lines, a 40,000-character line and 'é' (2 bytes) everywhere, so
    // slice edges fall inside lines and inside characters.
    const lines = Array.from({ length: 30_000 }, (_, i) => `é line ${i + 1} ${'x'.repeat(20)}`);
    lines[14_000] = `needle-long ${'y'.repeat(40_000)}`;
    lines[29_999] = 'needle at the end';
    const text = `${lines.join('\r\n')}\n`;
    assert.ok(Buffer.byteLength(text) > 1_000_000);
    await files.write('/big.txt', enc(text));
    const binary = Buffer.concat([Buffer.from(`needle first\n${'z'.repeat(300_000)}\n`), Buffer.from([0]), Buffer.from('needle\n')]);
    await files.write('/late-nul.bin', binary);

    const hits = await files.grep('needle|é line 9999 ', {});
    assert.deepEqual(
      hits.map((h) => h.path),
      ['/big.txt'],
    );
    const found = hits[0]!.matches.map((m) => [m.line_number, m.line.length, m.line.slice(0, 20)]);
    assert.deepEqual(found, [
      [9_999, lines[9_998]!.length, lines[9_998]!.slice(0, 20)],
      [14_001, 16_384, 'needle-long yyyyyyyy'],
      [30_000, 17, 'needle at the end'],
    ]);
    // The search stops at max_matches without reading further slices.
    assert.deepEqual(
      (await files.grep('line', { max_matches: 2 })).flatMap((h) => h.matches.map((m) => m.line_number)),
      [1, 2],
    );
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
