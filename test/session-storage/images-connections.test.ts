import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { storageFixture } from './helpers.js';

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);

describe('images and user connections (PostgreSQL)', () => {
  it('images: magic-byte types, img_ ids, size cap, org ownership', async (t) => {
    const fx = await storageFixture(t, { maxImageBytes: 64 });
    const s = await fx.session();
    const owner = { orgId: s.organization_id, userId: s.user_id, sessionId: s.id };
    const png = await fx.storage.images.create({ ...owner, filename: '../../etc/cat.png', data: PNG });
    assert.match(png.id, /^img_[0-9a-f]{32}$/);
    assert.equal(png.content_type, 'image/png');
    assert.equal(png.filename, 'cat.png');
    assert.equal(png.size_bytes, PNG.length);
    for (const [data, type] of [
      [Buffer.from([0xff, 0xd8, 0xff, 0xe0]), 'image/jpeg'],
      [Buffer.from('GIF87a..'), 'image/gif'],
      [Buffer.from('RIFF\x00\x00\x00\x00WEBPVP8 '), 'image/webp'],
    ] as const) {
      assert.equal((await fx.storage.images.create({ ...owner, data })).content_type, type);
    }
    await assert.rejects(fx.storage.images.create({ ...owner, data: Buffer.from('<svg/>') }), { status: 415 });
    await assert.rejects(fx.storage.images.create({ ...owner, data: Buffer.concat([PNG, Buffer.alloc(64)]) }), { status: 413 });
    const loaded = await fx.storage.images.load(s.organization_id, png.id);
    assert.deepEqual(loaded.data, PNG);
    const otherOrg = await fx.org();
    await assert.rejects(fx.storage.images.get(otherOrg, png.id), { status: 403 });
    await assert.rejects(fx.storage.images.get(s.organization_id, 'img_' + '0'.repeat(32)), { status: 404 });
    await assert.rejects(fx.storage.images.get(s.organization_id, 'bogus'), { status: 404 });
    await fx.storage.images.remove(s.organization_id, png.id);
    await assert.rejects(fx.storage.images.get(s.organization_id, png.id), { status: 404 });
  });

  it('connections: encrypted per user, upsert, injected into new sessions as connection:<provider> secrets', async (t) => {
    const fx = await storageFixture(t);
    const owner = { orgId: fx.orgId, userId: fx.userId };
    const first = await fx.storage.connections.put(owner, 'github', 'ghp_connectionkey1');
    assert.equal(first.created, true);
    const second = await fx.storage.connections.put(owner, 'github', 'ghp_connectionkey2');
    assert.equal(second.created, false);
    await fx.storage.connections.put(owner, 'gitlab', 'glpat_key');
    assert.deepEqual(
      (await fx.storage.connections.list(owner)).map((c) => c.provider),
      ['github', 'gitlab'],
    );
    const [raw] = await fx.store.sql<{ ciphertext: string }>(`select ciphertext from user_connections where provider = 'github'`);
    assert.ok(!raw!.ciphertext.includes('ghp_'));

    const s = await fx.session();
    assert.equal(await fx.storage.injectConnections(s), 2);
    const secrets = fx.storage.forSession(s).secrets;
    assert.deepEqual(
      (await secrets.list()).map((x) => x.name),
      ['connection:github', 'connection:gitlab'],
    );
    assert.equal((await secrets.get('connection:github'))?.value, 'ghp_connectionkey2');

    await fx.storage.connections.remove(owner, 'gitlab');
    await assert.rejects(fx.storage.connections.remove(owner, 'gitlab'), { status: 404 });
    await assert.rejects(fx.storage.connections.get(owner, 'gitlab'), { status: 404 });
  });
});
