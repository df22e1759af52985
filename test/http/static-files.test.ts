import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadStaticSite, STATIC_CSP } from '../../src/http/static-files.js';
import { startTestApp } from '../helpers/app.js';
import { request } from '../helpers/http.js';

/** A GET with the path sent exactly as given (fetch would normalise `..` away). */
function rawGet(base: string, path: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, path, method: 'GET' }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('static files: the web console at /console', () => {
  it('serves the console publicly with content types, CSP, revalidation and 304, and nothing outside it', async (t) => {
    const app = await startTestApp(t, { mode: 'pglite', env: { API_PREFIX: '/agents-api' } });

    for (const path of ['/console', '/console/']) {
      const res = await request(app.url, 'GET', path, { key: null });
      assert.equal(res.status, 200, path);
      assert.equal(res.headers.get('content-type'), 'text/html; charset=utf-8');
      assert.equal(res.headers.get('content-security-policy'), STATIC_CSP);
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
      assert.equal(res.headers.get('cache-control'), 'no-cache');
      assert.match(res.text, /<script type="module" src="\/console\/app.js">/);
      assert.match(res.text, /<meta name="api-prefix" content="\/agents-api">/, 'the API prefix is filled in');
    }
    const js = await request(app.url, 'GET', '/console/views/chat.js', { key: null });
    assert.equal(js.status, 200);
    assert.equal(js.headers.get('content-type'), 'text/javascript; charset=utf-8');
    const css = await request(app.url, 'GET', '/console/style.css', { key: null });
    assert.equal(css.headers.get('content-type'), 'text/css; charset=utf-8');
    const vendor = await request(app.url, 'GET', '/console/vendor/preact-htm.js', { key: null });
    assert.equal(vendor.status, 200);
    assert.match(vendor.text, /export\{/, 'Preact+htm as one ES module');

    const etag = js.headers.get('etag')!;
    assert.match(etag, /^"[A-Za-z0-9_-]+"$/);
    const again = await request(app.url, 'GET', '/console/views/chat.js', { key: null, headers: { 'if-none-match': etag } });
    assert.equal(again.status, 304);
    assert.equal(again.text, '');

    for (const path of [
      '/console/../package.json',
      '/console/%2e%2e/package.json',
      '/console/..%2fpackage.json',
      '/console/../../etc/passwd',
      '/console//etc/passwd',
      '/console/lib/../../src/app.ts',
      '/console/nope.js',
    ]) {
      const res = await rawGet(app.url, path);
      assert.ok(res.status === 404 || res.status === 400, `${path}: ${res.status}`);
      assert.doesNotMatch(res.body, /"dependencies"|root:|createApp/, path);
    }
    const post = await request(app.url, 'POST', '/console/app.js', { key: null });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get('allow'), 'GET');

    // Not API operations: absent from the OpenAPI document; the router's answers are unchanged.
    const doc = (await request(app.url, 'GET', '/api-doc/openapi.json')).body;
    assert.ok(!Object.keys(doc.paths).some((p) => p.includes('console')));
    assert.equal((await request(app.url, 'GET', '/consolex', { key: null })).status, 404);
    assert.equal((await app.request('GET', '/agents-api/v1/agents')).status, 200);
    assert.equal((await app.request('DELETE', '/health')).status, 405);
  });

  it('loads only regular files with a known extension, never dotfiles or what a symlink points to outside', (t) => {
    const root = mkdtempSync(join(tmpdir(), 'static-'));
    const outside = mkdtempSync(join(tmpdir(), 'outside-'));
    t.after(() => rmSync(root, { recursive: true, force: true }));
    t.after(() => rmSync(outside, { recursive: true, force: true }));
    mkdirSync(join(root, 'sub'));
    writeFileSync(join(root, 'index.html'), '<p>hi</p>');
    writeFileSync(join(root, 'sub', 'a.js'), 'export {}');
    writeFileSync(join(root, '.env'), 'SECRET=1');
    writeFileSync(join(root, 'notes.md'), '# notes');
    writeFileSync(join(outside, 'secret.js'), 'secret');
    symlinkSync(join(outside, 'secret.js'), join(root, 'link.js'));
    const site = loadStaticSite({ mount: '/s', root });
    assert.deepEqual(site.paths().sort(), ['', 'index.html', 'sub/a.js']);
    assert.equal(site.reply('GET', '/other', undefined), null);
    assert.throws(() => site.reply('GET', '/s/link.js', undefined), /Not found/);
    assert.throws(() => site.reply('GET', '/s/.env', undefined), /Not found/);
  });
});
