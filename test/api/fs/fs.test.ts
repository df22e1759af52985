import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startTestApp } from '../../helpers/app.js';
import { addCaller, useSuiteApp } from '../agents/helpers.js';
import { createSession, rawRequest, upload } from './helpers.js';

describe('session file system over REST', () => {
  const suiteApp = useSuiteApp();

  it('POST/GET/DELETE fs/{path}: raw bytes, stored Content-Type, ETag and 304, parents created, listing', async () => {
    const app = suiteApp();
    const id = await createSession(app);
    const bytes = new Uint8Array([0, 1, 2, 250, 255]);
    const created = await upload(app, id, '/workspace/data/blob.bin', bytes, 'application/x-custom');
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.path, '/data/blob.bin');
    assert.equal(created.body.size_bytes, 5);
    assert.equal(created.body.content_type, 'application/x-custom');
    assert.equal(created.body.session_id, id);
    assert.match(created.body.etag, /^"[0-9a-f]{64}"$/);

    const got = await app.request('GET', `/v1/sessions/${id}/fs/data/blob.bin`);
    assert.equal(got.status, 200);
    assert.equal(got.headers.get('content-type'), 'application/x-custom');
    assert.equal(got.headers.get('etag'), created.body.etag);
    const raw = await rawRequest(app, 'GET', `/v1/sessions/${id}/fs/data/blob.bin`);
    assert.deepEqual([...raw.body], [...bytes]);
    const cached = await app.request('GET', `/v1/sessions/${id}/fs/data/blob.bin`, { headers: { 'if-none-match': created.body.etag } });
    assert.equal(cached.status, 304);
    assert.equal(cached.text, '');
    assert.equal(
      (await app.request('GET', `/v1/sessions/${id}/fs/data/blob.bin`, { headers: { 'if-none-match': '"other"' } })).status,
      200,
    );

    const replaced = await upload(app, id, 'data/blob.bin', 'text now');
    assert.equal(replaced.status, 200);
    assert.notEqual(replaced.body.etag, created.body.etag);

    const root = await app.request('GET', `/v1/sessions/${id}/fs`);
    assert.deepEqual(
      root.body.data.map((f: any) => [f.path, f.is_directory]),
      [['/data', true]],
    );
    assert.equal(root.body.total, 1);
    const all = await app.request('GET', `/v1/sessions/${id}/fs?recursive=true`);
    assert.deepEqual(
      all.body.data.map((f: any) => f.path),
      ['/data', '/data/blob.bin'],
    );
    const dir = await app.request('GET', `/v1/sessions/${id}/fs/data`);
    assert.equal(dir.status, 200);
    assert.deepEqual(
      dir.body.data.map((f: any) => f.name),
      ['blob.bin'],
    );

    assert.equal((await app.request('DELETE', `/v1/sessions/${id}/fs/data`)).status, 409);
    assert.equal((await app.request('DELETE', `/v1/sessions/${id}/fs/data/blob.bin`)).status, 204);
    for (const method of ['GET', 'DELETE']) {
      const gone = await app.request(method, `/v1/sessions/${id}/fs/data/blob.bin`);
      assert.equal(gone.status, 404);
      assert.equal(gone.body.error, 'Not found: no such file or directory: /data/blob.bin', `${method}: spec 7 words a 404 'Not found'`);
    }
    assert.equal((await app.request('DELETE', `/v1/sessions/${id}/fs/data?recursive=true`)).status, 204);
  });

  it('POST fs/_/move|copy|grep|stat beat the catch-all route; shapes and errors', async () => {
    const app = suiteApp();
    const id = await createSession(app);
    await upload(app, id, 'notes/a.md', '# Title\nTODO: write\nDone\n');
    await upload(app, id, 'notes/b.txt', 'nothing here\ntodo lower');
    const op = (name: string, body: unknown) => app.request('POST', `/v1/sessions/${id}/fs/_/${name}`, { body });

    const stat = await op('stat', { path: '/workspace/notes/a.md' });
    assert.equal(stat.status, 200, stat.text);
    assert.equal(stat.body.path, '/notes/a.md');
    assert.equal(stat.body.is_directory, false);
    assert.equal((await op('stat', { path: '/notes' })).body.is_directory, true);
    const missing = await op('stat', { path: '/nope' });
    assert.equal(missing.status, 404);
    assert.match(missing.body.error, /^Not found: /);

    const grep = await op('grep', { pattern: 'TODO' });
    assert.equal(grep.status, 200);
    assert.deepEqual(grep.body, {
      data: [{ path: '/notes/a.md', matches: [{ path: '/notes/a.md', line_number: 2, line: 'TODO: write' }] }],
      total: 1,
      truncated: false,
    });
    assert.equal((await op('grep', { pattern: 'todo', ignore_case: true })).body.total, 2);
    assert.equal((await op('grep', { pattern: 'todo', ignore_case: true, path_pattern: '*.txt' })).body.data[0].path, '/notes/b.txt');
    assert.equal((await op('grep', { pattern: '(' })).status, 400);

    const copy = await op('copy', { src_path: '/notes/a.md', dst_path: '/archive/a.md' });
    assert.equal(copy.status, 201, copy.text);
    assert.equal(copy.body.path, '/archive/a.md');
    assert.equal((await op('copy', { src_path: '/notes/a.md', dst_path: '/archive/a.md' })).status, 409);
    const copyMissing = await op('copy', { src_path: '/missing', dst_path: '/x' });
    assert.equal(copyMissing.status, 404);
    assert.equal(copyMissing.body.error, 'Not found: no such file or directory: /missing');
    const move = await op('move', { src_path: '/notes', dst_path: '/moved' });
    assert.equal(move.status, 200, move.text);
    assert.equal(move.body.is_directory, true);
    assert.equal((await app.request('GET', `/v1/sessions/${id}/fs/moved/b.txt`)).text, 'nothing here\ntodo lower');
    assert.equal((await op('move', { src_path: '/moved', dst_path: '/moved/inner' })).status, 422);
    assert.equal((await op('move', { src_path: '/moved/a.md', dst_path: '/archive/a.md' })).status, 409);
    assert.equal((await op('move', { src_path: '/moved/a.md', dst_path: '/archive/a.md', overwrite: true })).status, 200);
    assert.equal((await op('move', { src_path: '../x', dst_path: '/y' })).status, 400);
    assert.equal((await op('move', { src_path: '/x' })).status, 400);
  });

  it('path traversal: .., encoded %2e%2e and %2f, NUL and control characters are 400; nothing is written outside', async () => {
    const app = suiteApp();
    const id = await createSession(app);
    const other = await createSession(app);
    await upload(app, other, 'secret.txt', 'other session');
    const base = `/v1/sessions/${id}/fs`;
    for (const path of [
      '../secret.txt',
      'a/../../secret.txt',
      '%2e%2e/secret.txt',
      '%2E%2E%2Fsecret.txt',
      'a/%2e%2e/%2e%2e/x',
      '..%2f..%2fx',
      'a%00b.txt',
      'a%0ab.txt',
      `..%2f${other}%2ffs%2fsecret.txt`,
    ]) {
      for (const method of ['POST', 'GET', 'DELETE']) {
        const res = await rawRequest(app, method, `${base}/${path}`, method === 'POST' ? 'x' : undefined, { 'content-type': 'text/plain' });
        assert.equal(res.status, 400, `${method} ${path}: ${res.status} ${res.body}`);
        assert.deepEqual(Object.keys(res.json()).sort(), ['error', 'status']);
      }
    }
    const stat = await app.request('POST', `${base}/_/stat`, { body: { path: 'a\u0000b' } });
    assert.equal(stat.status, 400);
    assert.deepEqual((await app.request('GET', `${base}?recursive=true`)).body.data, []);
    assert.equal((await app.request('GET', `/v1/sessions/${other}/fs/secret.txt`)).text, 'other session');
    // Dot segments that stay inside are plain names after decoding only when they are not `..`.
    assert.equal((await rawRequest(app, 'POST', `${base}/./a/./b.txt`, 'ok', { 'content-type': 'text/plain' })).status, 201);
    assert.equal((await app.request('POST', `${base}/_/stat`, { body: { path: '/a/b.txt' } })).status, 200);
  });

  it('quota (SESSION_FS_QUOTA_BYTES) and the per-file limit (max_file_size, max_file_size_mb) at their exact boundaries: 413', async (t) => {
    const app = await startTestApp(t, { env: { SESSION_FS_QUOTA_BYTES: 1000 } });
    const id = await createSession(app, [{ ref: 'session_file_system', config: { max_file_size: 600 } }]);
    assert.equal((await upload(app, id, 'a.bin', new Uint8Array(600))).status, 201);
    const tooBig = await upload(app, id, 'b.bin', new Uint8Array(601));
    assert.equal(tooBig.status, 413);
    assert.deepEqual(Object.keys(tooBig.body).sort(), ['error', 'status']);
    assert.equal((await upload(app, id, 'b.bin', new Uint8Array(400))).status, 201);
    assert.equal((await upload(app, id, 'c.bin', new Uint8Array(1))).status, 413, 'quota of 1000 bytes is full');
    assert.equal((await upload(app, id, 'a.bin', new Uint8Array(600))).status, 200, 'replacing counts the old size out');
    assert.equal(
      (await app.request('POST', `/v1/sessions/${id}/fs/_/copy`, { body: { src_path: '/b.bin', dst_path: '/d.bin' } })).status,
      413,
    );
    assert.equal(
      (await upload(app, id, 'big.bin', new Uint8Array(1001))).status,
      413,
      'above the quota the body is refused before parsing',
    );

    const mb = await createSession(app, [{ ref: 'session_file_system', config: { max_file_size_mb: 0.0005 } }]); // 524 bytes
    assert.equal((await upload(app, mb, 'x.bin', new Uint8Array(524))).status, 201);
    assert.equal((await upload(app, mb, 'y.bin', new Uint8Array(525))).status, 413);
  });

  it('read-only files (capability mounts) refuse writes, moves and deletes with 403', async () => {
    const app = suiteApp();
    const id = await createSession(app);
    const session = await app.app.services.storage.access.owned(
      { org_id: (await app.request('GET', `/v1/sessions/${id}`)).body.organization_id },
      id,
    );
    await app.app.services.storage
      .forSession(session)
      .files.write('/mnt/README.md', new TextEncoder().encode('mounted'), { readonly: true });
    const info = await app.request('POST', `/v1/sessions/${id}/fs/_/stat`, { body: { path: '/mnt/README.md' } });
    assert.equal(info.body.is_readonly, true);
    assert.equal((await upload(app, id, 'mnt/README.md', 'overwrite')).status, 403);
    assert.equal((await app.request('DELETE', `/v1/sessions/${id}/fs/mnt/README.md`)).status, 403);
    assert.equal((await app.request('DELETE', `/v1/sessions/${id}/fs/mnt?recursive=true`)).status, 403);
    assert.equal(
      (await app.request('POST', `/v1/sessions/${id}/fs/_/move`, { body: { src_path: '/mnt/README.md', dst_path: '/r.md' } })).status,
      403,
    );
    assert.equal(
      (await app.request('POST', `/v1/sessions/${id}/fs/_/copy`, { body: { src_path: '/mnt/README.md', dst_path: '/r.md' } })).status,
      201,
    );
    assert.equal((await app.request('GET', `/v1/sessions/${id}/fs/mnt/README.md`)).text, 'mounted');
  });

  it('a session without session_file_system gets 404 on its fs routes; other orgs 403; unknown sessions 404', async () => {
    const app = suiteApp();
    const bare = await createSession(app, ['current_time']);
    for (const [method, path, body] of [
      ['GET', 'fs'],
      ['GET', 'fs/a.txt'],
      ['POST', 'fs/_/stat', { path: '/' }],
      ['DELETE', 'fs/a.txt'],
    ] as const) {
      const r = await app.request(method, `/v1/sessions/${bare}/${path}`, body ? { body } : {});
      assert.equal(r.status, 404, `${method} ${path}`);
      assert.match(r.body.error, /file_system/);
    }
    assert.equal((await upload(app, bare, 'a.txt', 'x')).status, 404);
    assert.equal((await app.request('GET', '/v1/sessions/0190e0a0-0000-7000-8000-000000000000/fs')).status, 404);
    assert.equal((await app.request('GET', '/v1/sessions/not-a-uuid/fs')).status, 400);
    const mine = await createSession(app);
    await upload(app, mine, 'a.txt', 'mine');
    const stranger = await addCaller(app);
    assert.equal((await stranger.request('GET', `/v1/sessions/${mine}/fs`)).status, 403);
    assert.equal((await stranger.request('GET', `/v1/sessions/${mine}/fs/a.txt`)).status, 403);
    assert.equal((await stranger.request('POST', `/v1/sessions/${mine}/fs/_/grep`, { body: { pattern: 'mine' } })).status, 403);
    assert.equal((await stranger.request('POST', `/v1/sessions/${mine}/fs/b.txt`, { raw: 'x' })).status, 403);
  });
});
