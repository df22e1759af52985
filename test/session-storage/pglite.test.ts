import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { storageFixture } from './helpers.js';

// Embedded mode runs the same SQL on PGlite: collation "C" ranges, advisory locks, row locks,
// FOR UPDATE SKIP LOCKED, xmax, bytea round trips.
describe('storage on PGlite (embedded mode)', () => {
  it('every store works on PGlite', async (t) => {
    const fx = await storageFixture(t, { pglite: true, fsQuotaBytes: 50 });
    const s = await fx.session();
    const st = fx.storage.forSession(s);

    await st.files.write('/d/a.txt', new TextEncoder().encode('needle here'));
    await Promise.allSettled([st.files.write('/x.bin', new Uint8Array(30)), st.files.write('/y.bin', new Uint8Array(30))]);
    assert.ok((await st.files.usedBytes()) <= 50);
    await st.files.move('/d', '/e');
    assert.deepEqual(
      (await st.files.list('/e')).map((f) => f.path),
      ['/e/a.txt'],
    );
    assert.equal((await st.files.grep('needle', { path_pattern: '*.txt' }))[0]!.path, '/e/a.txt');
    assert.deepEqual([...(await st.files.read('/e/a.txt')).content.subarray(0, 6)], [...Buffer.from('needle')]);

    await st.kv.set('k', 'v');
    assert.equal(await st.kv.get('k'), 'v');
    await st.secrets.set('S', { value: 'secret-value', allowed_hosts: ['api.example.com'] });
    assert.deepEqual(await st.secrets.get('S'), { value: 'secret-value', allowed_hosts: ['api.example.com'] });

    const db = await st.sql.open('main', { create: true });
    await db.exec('create table t (x); insert into t values (1), (2)');
    assert.deepEqual((await db.query('select sum(x) as s from t')).rows, [[3]]);

    await st.schedules.create({
      name: 'n',
      message: 'm',
      kind: 'once',
      scheduled_at: '2000-01-01T00:00:00.000Z',
      cron_expression: null,
      timezone: 'UTC',
      next_run_at: '2000-01-01T00:00:00.000Z',
      max_active: 5,
    });
    const claim = (await fx.storage.scheduleQueue.claimDue('w', 60_000))!;
    assert.equal(claim.name, 'n');
    assert.equal(await fx.storage.scheduleQueue.claimDue('w2', 60_000), null);
    assert.equal(await claim.finish(null), true);

    const owner = { orgId: fx.orgId, userId: fx.userId };
    assert.equal((await fx.storage.connections.put(owner, 'github', 'k1')).created, true);
    assert.equal((await fx.storage.connections.put(owner, 'github', 'k2')).created, false);
    assert.equal(await fx.storage.injectConnections(s), 1);
    assert.deepEqual(await st.secrets.get('connection:github'), {
      value: 'k2',
      allowed_hosts: ['api.github.com', 'github.com', 'uploads.github.com'],
    });

    const img = await fx.storage.images.create({
      orgId: s.organization_id,
      userId: s.user_id,
      sessionId: s.id,
      data: Buffer.from('GIF89a-data'),
    });
    assert.deepEqual((await fx.storage.images.load(s.organization_id, img.id)).data, Buffer.from('GIF89a-data'));
  });
});
