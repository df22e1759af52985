import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InvalidRequestError } from '../../src/errors.js';
import { storageFixture } from './helpers.js';

describe('session key/value and secrets (PostgreSQL)', () => {
  it('kv: set, overwrite, prefix list (LIKE wildcards are literal), delete; per session', async (t) => {
    const fx = await storageFixture(t);
    const { kv } = fx.storage.forSession(await fx.session());
    const other = fx.storage.forSession(await fx.session()).kv;
    await kv.set('a_1', 'one');
    await kv.set('a%2', 'two');
    await kv.set('ab', 'three');
    await kv.set('a_1', 'uno');
    assert.equal(await kv.get('a_1'), 'uno');
    assert.deepEqual(
      (await kv.list({ prefix: 'a_' })).entries.map((e) => e.key),
      ['a_1'],
    );
    assert.deepEqual(
      (await kv.list({ prefix: 'a%' })).entries.map((e) => e.key),
      ['a%2'],
    );
    assert.deepEqual(
      (await kv.list()).entries.map((e) => e.key),
      ['a%2', 'a_1', 'ab'],
    );
    const page = await kv.list({ limit: 1, offset: 1, include_values: true });
    assert.deepEqual(
      page.entries.map((e) => [e.key, e.value]),
      [['a_1', 'uno']],
    );
    assert.equal(page.total, 3);
    assert.equal((await kv.list()).entries[0]!.value, undefined, 'no values unless asked');
    assert.equal(await other.get('a_1'), null);
    assert.equal(await kv.delete('ab'), true);
    assert.equal(await kv.delete('ab'), false);
  });

  it('kv: a NUL or a lone surrogate in a value is refused with a clear 4xx and changes nothing', async (t) => {
    const fx = await storageFixture(t);
    const { kv } = fx.storage.forSession(await fx.session());
    await kv.set('k', 'before');
    for (const value of ['a\u0000b', 'x\ud800']) {
      await assert.rejects(
        kv.set('k', value),
        (err: unknown) => err instanceof InvalidRequestError && /NUL characters or unpaired surrogates/.test(err.message),
      );
    }
    assert.equal(await kv.get('k'), 'before');
  });

  it('secrets: encrypted at rest, names-only listing, bound to their row', async (t) => {
    const fx = await storageFixture(t);
    const s1 = await fx.session();
    const s2 = await fx.session();
    const one = fx.storage.forSession(s1).secrets;
    const two = fx.storage.forSession(s2).secrets;
    await one.set('GITHUB_TOKEN', { value: 'ghp_supersecretvalue', allowed_hosts: ['api.github.com'] });
    await one.set('GITHUB_TOKEN', { value: 'ghp_rotatedvalue' });
    await two.set('GITHUB_TOKEN', { value: 'other-session-value' });
    assert.deepEqual(
      await one.get('GITHUB_TOKEN'),
      { value: 'ghp_rotatedvalue', allowed_hosts: ['api.github.com'] },
      'a rotation keeps the hosts',
    );
    assert.deepEqual(await two.get('GITHUB_TOKEN'), { value: 'other-session-value', allowed_hosts: [] }, 'a new secret goes nowhere');
    assert.equal(await one.get('MISSING'), null);
    await one.set('GITHUB_TOKEN', { value: 'ghp_rotatedvalue', allowed_hosts: [] });
    assert.deepEqual((await one.get('GITHUB_TOKEN'))?.allowed_hosts, [], 'explicit hosts replace the old ones');
    const list = await one.list();
    assert.deepEqual(
      list.map((s) => Object.keys(s).sort()),
      [['allowed_hosts', 'created_at', 'name', 'updated_at']],
    );

    const rows = await fx.store.sql<{ session_id: string; ciphertext: string }>('select session_id, ciphertext from session_secrets');
    for (const r of rows) assert.ok(!r.ciphertext.includes('value') && !r.ciphertext.includes('ghp_'));
    // A ciphertext copied onto another session's row does not open there.
    const stolen = rows.find((r) => r.session_id === s1.id)!.ciphertext;
    await fx.store.sql('update session_secrets set ciphertext = ? where session_id = ?', [stolen, s2.id]);
    await assert.rejects(two.get('GITHUB_TOKEN'), { name: 'DecryptionError' });
    assert.equal(await one.delete('GITHUB_TOKEN'), true);
    assert.deepEqual(await one.list(), []);
  });

  it('storage rows go with their session (on delete cascade)', async (t) => {
    const fx = await storageFixture(t);
    const s = await fx.session();
    const st = fx.storage.forSession(s);
    await st.files.write('/f.txt', new Uint8Array([1]));
    await st.kv.set('k', 'v');
    await st.secrets.set('S', { value: 'v' });
    await (await st.sql.open('main', { create: true })).exec('create table t (x)');
    await st.schedules.create({
      name: 'n',
      message: 'm',
      kind: 'once',
      scheduled_at: '2099-01-01T00:00:00.000Z',
      cron_expression: null,
      timezone: 'UTC',
      next_run_at: '2099-01-01T00:00:00.000Z',
      max_active: 5,
    });
    await fx.storage.images.create({ orgId: s.organization_id, userId: s.user_id, sessionId: s.id, data: Buffer.from('GIF89a....') });
    await fx.store.sql('delete from sessions where id = ?', [s.id]);
    for (const table of ['session_files', 'session_kv', 'session_secrets', 'session_sql_databases', 'session_schedules', 'images']) {
      const [row] = await fx.store.sql<{ n: string }>(`select count(*) as n from ${table}`);
      assert.equal(Number(row!.n), 0, table);
    }
  });

  it('kv quota under parallel writers: 409 past the entries, 413 past the bytes, nothing written beyond', async (t) => {
    const fx = await storageFixture(t, { kvMaxEntries: 5, kvMaxBytes: 64 });
    const { kv } = fx.storage.forSession(await fx.session());
    const outcomes = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => kv.set(`k${i}`, 'v')));
    assert.equal(outcomes.filter((o) => o.status === 'fulfilled').length, 5, 'the lock makes the count exact');
    const refused = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected')!.reason;
    assert.deepEqual([refused.status, refused.code], [409, 'quota_exceeded']);
    const first = (await kv.list()).entries[0]!.key;
    await assert.rejects(kv.set(first, 'x'.repeat(64)), (e: any) => e.status === 413 && /64 bytes/.test(e.message));
    assert.equal(await kv.get(first), 'v');
    assert.equal((await kv.list()).total, 5);
  });
});
