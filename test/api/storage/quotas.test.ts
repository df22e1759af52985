import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startTestApp, type TestApp } from '../../helpers/app.js';
import { createSession, runTools } from '../fs/helpers.js';

/** Small quotas so each is reached in a few calls; the defaults are in src/config.ts. */
const QUOTAS = {
  SESSION_KV_MAX_ENTRIES: 3,
  SESSION_KV_MAX_BYTES: 200,
  SESSION_MAX_SECRETS: 3,
  SESSION_MAX_SCHEDULES: 2,
  SESSION_MAX_IMAGES: 2,
  SESSION_IMAGE_QUOTA_BYTES: 1000,
  USER_MAX_CONNECTIONS: 2,
};

const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a5b1d3e70000000049454e44ae426082',
  'hex',
);

async function uploadImage(app: TestApp, sessionId: string, bytes: Buffer) {
  const fd = new FormData();
  fd.append('session_id', sessionId);
  fd.append('file', new Blob([bytes], { type: 'image/png' }), 'dot.png');
  const res = await fetch(`${app.url}/v1/images`, { method: 'POST', body: fd, headers: { authorization: `Bearer ${app.adminKey}` } });
  return { status: res.status, body: await res.json() };
}

const isQuotaError = (r: { status: number; body: any }, status: number, pattern: RegExp) => {
  assert.equal(r.status, status, JSON.stringify(r.body));
  assert.deepEqual(Object.keys(r.body).sort(), ['error', 'status']);
  assert.equal(r.body.status, status);
  assert.match(r.body.error, pattern);
};

test('tenant quotas: each refuses with a clear error and changes nothing', async (t) => {
  const app = await startTestApp(t, { mode: 'postgres', env: QUOTAS });

  await t.test('kv entries and bytes per session (kv_store tool); the listing pages names, values on request', async () => {
    const id = await createSession(app, ['session_storage']);
    const sets = await runTools(app, id, [
      ['kv_store', { operation: 'set', key: 'a', value: '1' }],
      ['kv_store', { operation: 'set', key: 'b', value: '2' }],
      ['kv_store', { operation: 'set', key: 'c', value: '3' }],
    ]);
    assert.ok(sets.every((s) => s.success));
    const [fourth, replace, tooBig] = await runTools(app, id, [
      ['kv_store', { operation: 'set', key: 'd', value: '4' }],
      ['kv_store', { operation: 'set', key: 'a', value: 'one' }],
      ['kv_store', { operation: 'set', key: 'b', value: 'x'.repeat(300) }],
    ]);
    assert.equal(fourth!.success, false);
    assert.match(fourth!.error!, /at most 3 entries/);
    assert.equal(replace!.success, true, 'replacing an entry is not a new one');
    assert.equal(tooBig!.success, false);
    assert.match(tooBig!.error!, /at most 200 bytes/);

    const page = await app.request('GET', `/v1/sessions/${id}/storage/keys?limit=2&offset=1`);
    assert.equal(page.status, 200);
    assert.deepEqual(
      page.body.data.map((e: any) => e.key),
      ['b', 'c'],
    );
    assert.deepEqual([page.body.total, page.body.offset, page.body.limit], [3, 1, 2]);
    assert.ok(
      page.body.data.every((e: any) => !('value' in e)),
      'names only by default',
    );
    const values = await app.request('GET', `/v1/sessions/${id}/storage/keys?include_values=true`);
    assert.deepEqual(
      values.body.data.map((e: any) => [e.key, e.value]),
      [
        ['a', 'one'],
        ['b', '2'],
        ['c', '3'],
      ],
      'the refused writes changed nothing',
    );
    for (const q of ['limit=0', 'limit=1001', 'offset=-1', 'include_values=maybe']) {
      assert.equal((await app.request('GET', `/v1/sessions/${id}/storage/keys?${q}`)).status, 400, q);
    }
  });

  await t.test('kv over REST (PUT/DELETE storage/keys/{key}): the same quotas; bad input is 4xx and changes nothing', async () => {
    const id = await createSession(app, ['session_storage']);
    const put = (key: string, value: unknown) =>
      app.request('PUT', `/v1/sessions/${id}/storage/keys/${encodeURIComponent(key)}`, { body: { value } });
    const set = await put('notes/today', 'plan');
    assert.equal(set.status, 200, set.text);
    assert.deepEqual(set.body, { key: 'notes/today', size_bytes: 4 });
    assert.equal((await put('b', '2')).status, 200);
    assert.equal((await put('c', '3')).status, 200);
    isQuotaError(await put('d', '4'), 409, /at most 3 entries/);
    isQuotaError(await put('b', 'x'.repeat(300)), 413, /at most 200 bytes/);
    assert.equal((await put('b', 'two')).status, 200, 'replacing an entry is not a new one');
    for (const bad of [await put('tab\tkey', 'v'), await put('e', 42), await put('x'.repeat(257), 'v')]) {
      assert.equal(bad.status, 400, bad.text);
      assert.deepEqual(Object.keys(bad.body).sort(), ['error', 'status']);
    }
    const values = await app.request('GET', `/v1/sessions/${id}/storage/keys?include_values=true`);
    assert.deepEqual(
      values.body.data.map((e: { key: string; value: string }) => [e.key, e.value]),
      [
        ['b', 'two'],
        ['c', '3'],
        ['notes/today', 'plan'],
      ],
    );
    assert.equal((await app.request('DELETE', `/v1/sessions/${id}/storage/keys/${encodeURIComponent('notes/today')}`)).status, 204);
    assert.equal((await app.request('DELETE', `/v1/sessions/${id}/storage/keys/${encodeURIComponent('notes/today')}`)).status, 404);
    const noKv = await createSession(app, []);
    assert.equal(
      (await app.request('PUT', `/v1/sessions/${noKv}/storage/keys/a`, { body: { value: '1' } })).status,
      404,
      'needs the capability',
    );
  });

  await t.test('secrets per session (PUT storage/secrets): 409, all or nothing', async () => {
    const id = await createSession(app, ['session_storage']);
    assert.equal(
      (await app.request('PUT', `/v1/sessions/${id}/storage/secrets`, { body: { secrets: { A: 'v-a', B: 'v-b' } } })).status,
      200,
    );
    isQuotaError(
      await app.request('PUT', `/v1/sessions/${id}/storage/secrets`, { body: { secrets: { C: 'v-c', D: 'v-d' } } }),
      409,
      /at most 3 secrets/,
    );
    const names = await app.request('GET', `/v1/sessions/${id}/storage/secrets`);
    assert.deepEqual(
      names.body.data.map((s: any) => s.name),
      ['A', 'B'],
      'neither C nor D was stored',
    );
    assert.equal(
      (await app.request('PUT', `/v1/sessions/${id}/storage/secrets`, { body: { secrets: { A: 'new', C: 'v-c' } } })).status,
      200,
    );
    const [viaTool] = await runTools(app, id, [['secret_store', { operation: 'set', name: 'E', value: 'v-e' }]]);
    assert.equal(viaTool!.success, false);
    assert.match(viaTool!.error!, /at most 3 secrets/);
  });

  await t.test('schedules per session, cancelled ones included (create_schedule tool)', async () => {
    const id = await createSession(app, ['session_schedule']);
    const at = new Date(Date.now() + 24 * 3600_000).toISOString();
    const made = await runTools(app, id, [
      ['create_schedule', { name: 'one', message: 'ping', scheduled_at: at }],
      ['create_schedule', { name: 'two', message: 'ping', scheduled_at: at }],
    ]);
    assert.ok(
      made.every((m) => m.success),
      JSON.stringify(made),
    );
    const [cancelled] = await runTools(app, id, [['cancel_schedule', { schedule_id: made[0]!.result.schedule.id }]]);
    assert.equal(cancelled!.success, true, cancelled!.error);
    const [third] = await runTools(app, id, [['create_schedule', { name: 'three', message: 'ping', scheduled_at: at }]]);
    assert.equal(third!.success, false);
    assert.match(third!.error!, /at most 2 schedules/);
    const [rows] = await app.app.services.store.sql<{ n: number }>(
      'select count(*)::int as n from session_schedules where session_id = ?',
      [id],
    );
    assert.equal(rows!.n, 2);
  });

  await t.test('images per session: 409 past the count, 413 past the bytes', async () => {
    const id = await createSession(app, ['current_time']);
    assert.equal((await uploadImage(app, id, PNG)).status, 201);
    assert.equal((await uploadImage(app, id, PNG)).status, 201);
    isQuotaError(await uploadImage(app, id, PNG), 409, /at most 2 images/);
    const other = await createSession(app, ['current_time']);
    isQuotaError(await uploadImage(app, other, Buffer.concat([PNG, Buffer.alloc(1000)])), 413, /at most 1000 bytes of images/);
    const [count] = await app.app.services.store.sql<{ n: number }>('select count(*)::int as n from images where session_id in (?, ?)', [
      id,
      other,
    ]);
    assert.equal(count!.n, 2);
  });

  await t.test('connections per user: 409, replacing one is fine', async () => {
    assert.equal((await app.request('POST', '/v1/user/connections', { body: { provider: 'github', api_key: 'k1-xxxx' } })).status, 201);
    assert.equal((await app.request('POST', '/v1/user/connections', { body: { provider: 'gitlab', api_key: 'k2-xxxx' } })).status, 201);
    isQuotaError(
      await app.request('POST', '/v1/user/connections', { body: { provider: 'bitbucket', api_key: 'k3-xxxx' } }),
      409,
      /at most 2 connections/,
    );
    assert.equal((await app.request('POST', '/v1/user/connections', { body: { provider: 'github', api_key: 'k1-yyyy' } })).status, 200);
    assert.deepEqual(
      (await app.request('GET', '/v1/user/connections')).body.data.map((c: any) => c.provider),
      ['github', 'gitlab'],
    );
  });
});
