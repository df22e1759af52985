import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { createWebFetchCapability, webFetchCapability } from '../../../src/capabilities/web-fetch/capability.js';
import { parseHostAllowlist } from '../../../src/capabilities/web-fetch/address-policy.js';
import { systemResolver } from '../../../src/capabilities/web-fetch/safe-fetch.js';
import { ToolError, type ToolResult } from '../../../src/capabilities/types.js';
import { createFakeToolContext, jsonOf, toolOf } from '../fakes.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
const PAGE =
  '<html><head><title>T</title><script>evil()</script></head><body><h1>Hello</h1><p>A <a href="https://x.test/">link</a>.</p></body></html>';
/** 256 KiB of paragraphs: node-html-markdown took 52 s over it whole on a loaded 2-core machine. */
const LONG_BODY = '<p>lorem ipsum dolor sit amet</p>\n'.repeat(8192);
const routes: Record<string, Handler> = {
  '/page': (_q, s) => s.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE),
  '/plain': (_q, s) => s.writeHead(200, { 'content-type': 'text/plain' }).end('just text'),
  '/big': (_q, s) => s.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(5000)),
  '/gzip': (_q, s) => s.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' }).end(gzipSync('y'.repeat(3000))),
  '/binary': (_q, s) => s.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1])),
  '/nul-html': (_q, s) => s.writeHead(200, { 'content-type': 'text/html' }).end(Buffer.alloc(64 * 1024, 0)),
  '/late-nul': (_q, s) =>
    s
      .writeHead(200, { 'content-type': 'text/plain' })
      .end(Buffer.concat([Buffer.alloc(9000, 'a'), Buffer.alloc(200, 0), Buffer.from('z')])),
  '/sparse-nul': (_q, s) => s.writeHead(200, { 'content-type': 'text/plain' }).end(`${'a'.repeat(9000)}\0b\0c`),
  '/utf16': (_q, s) => s.writeHead(200, { 'content-type': 'text/plain; charset=utf-16le' }).end(Buffer.from('hi there', 'utf16le')),
  '/long-page': (_q, s) => s.writeHead(200, { 'content-type': 'text/html' }).end(`<html><body>${LONG_BODY}</body></html>`),
  '/missing': (_q, s) => s.writeHead(404, { 'content-type': 'text/plain' }).end('not here'),
  '/hang': () => {},
  '/host': (q, s) => s.writeHead(200, { 'content-type': 'text/plain' }).end(`host=${q.headers.host}`),
  '/to-page': (_q, s) => s.writeHead(302, { location: '/page' }).end(),
  '/loop': (_q, s) => s.writeHead(302, { location: '/loop' }).end(),
};
let server: Server;
let port = 0;
let hits: string[] = [];
let redirectTarget = '';

before(async () => {
  server = createServer((req, res) => {
    hits.push(req.url ?? '');
    if (req.url === '/to-loopback') return void res.writeHead(301, { location: redirectTarget }).end();
    (routes[req.url ?? ''] ?? ((_q: IncomingMessage, s: ServerResponse) => s.writeHead(500).end()))(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
after(() => {
  server.closeAllConnections();
  server.close();
});

const fetchTool = toolOf(webFetchCapability, 'fetch_url');
const local = (path: string) => `http://127.0.0.1:${port}${path}`;
/** The operator's setting (WEB_FETCH_ALLOWED_PRIVATE_HOSTS=127.0.0.1): the only way to reach a local server. */
const operatorAllows = (list: string, more: Parameters<typeof createWebFetchCapability>[0] = {}) =>
  toolOf(createWebFetchCapability({ allowPrivateHosts: parseHostAllowlist(list), ...more }), 'fetch_url');
const localFetch = operatorAllows('127.0.0.1');
const allowLocal = (extra: Record<string, unknown> = {}) => createFakeToolContext({ config: extra });
const refused = (pattern: RegExp) => (e: unknown) => e instanceof ToolError && pattern.test(e.message);
const meta = (r: ToolResult) => jsonOf<Record<string, unknown>>(r);

describe('fetch_url SSRF protection', () => {
  it('refuses loopback by IP without connecting', async () => {
    hits = [];
    await assert.rejects(fetchTool.execute({ url: local('/plain') }, createFakeToolContext()), refused(/127\.0\.0\.1 \(loopback\)/));
    assert.deepEqual(hits, []);
  });

  it('refuses private, metadata and IPv6 loopback addresses', async () => {
    const ctx = createFakeToolContext();
    await assert.rejects(fetchTool.execute({ url: 'http://10.1.2.3/' }, ctx), refused(/10\.1\.2\.3 \(private\)/));
    await assert.rejects(fetchTool.execute({ url: 'http://192.168.0.10:8080/admin' }, ctx), refused(/private/));
    await assert.rejects(fetchTool.execute({ url: 'http://169.254.169.254/latest/meta-data/' }, ctx), refused(/metadata/));
    await assert.rejects(fetchTool.execute({ url: 'http://[::1]/' }, ctx), refused(/loopback/));
    await assert.rejects(fetchTool.execute({ url: 'http://0x7f000001/' }, ctx), refused(/loopback/));
  });

  it('refuses a DNS name that resolves to loopback', async () => {
    hits = [];
    await assert.rejects(
      fetchTool.execute({ url: `http://localhost:${port}/plain` }, createFakeToolContext()),
      refused(/localhost resolves to .* \(loopback\)/),
    );
    assert.deepEqual(hits, []);
  });

  it('refuses a redirect to loopback (every hop is checked)', async () => {
    hits = [];
    redirectTarget = `http://127.0.0.1:${port}/plain`;
    // The first host is allowlisted by the operator and pinned to the local server; the redirect target is not allowlisted.
    const tool = operatorAllows('public.test', {
      resolve: async (h) => (h === 'public.test' ? [{ address: '127.0.0.1', family: 4 }] : systemResolver(h)),
    });
    await assert.rejects(tool.execute({ url: `http://public.test:${port}/to-loopback` }, createFakeToolContext()), refused(/loopback/));
    assert.deepEqual(hits, ['/to-loopback']);
  });

  it('never fetches cloud metadata, even when the operator allowlisted it (or everything)', async () => {
    for (const list of ['169.254.169.254', '*']) {
      await assert.rejects(
        operatorAllows(list).execute({ url: 'http://169.254.169.254/' }, createFakeToolContext()),
        refused(/cloud metadata/),
      );
    }
  });

  it('connects to the resolved, checked address (pinned) while keeping the URL host', async () => {
    const tool = operatorAllows('pinned.test', { resolve: async () => [{ address: '127.0.0.1', family: 4 }] });
    const result = await tool.execute({ url: `http://pinned.test:${port}/host` }, createFakeToolContext());
    assert.equal(result.content[1]!.text, `host=pinned.test:${port}`);
  });

  it("a tenant's allow_hosts (agent or session config) does not reach a local server; the operator setting does", async () => {
    hits = [];
    for (const allow_hosts of [['127.0.0.1'], ['*.0.0.1'], ['localhost', '[::1]'], ['*']]) {
      const tenant = createFakeToolContext({ config: { allow_hosts } });
      await assert.rejects(
        fetchTool.execute({ url: local('/plain') }, tenant),
        refused(/127\.0\.0\.1 \(loopback\).*WEB_FETCH_ALLOWED_PRIVATE_HOSTS/),
      );
      await assert.rejects(fetchTool.execute({ url: `http://localhost:${port}/plain` }, tenant), refused(/loopback/));
    }
    assert.deepEqual(hits, [], 'nothing reached the local server');
    const viaOperator = await localFetch.execute({ url: local('/plain') }, createFakeToolContext({ config: { allow_hosts: [] } }));
    assert.equal(viaOperator.content[1]!.text, 'just text');
    assert.deepEqual(hits, ['/plain']);
  });

  it('operator wildcards never match IP literals; a port pins the entry to that port', async () => {
    const resolve = async () => [{ address: '127.0.0.1', family: 4 as const }];
    await assert.rejects(
      operatorAllows('*.0.0.1', { resolve }).execute({ url: local('/plain') }, createFakeToolContext()),
      refused(/loopback/),
    );
    const byName = await operatorAllows('*.internal.test', { resolve }).execute(
      { url: `http://svc.internal.test:${port}/plain` },
      createFakeToolContext(),
    );
    assert.equal(byName.content[1]!.text, 'just text');
    await assert.rejects(
      operatorAllows(`127.0.0.1:${port + 1}`).execute({ url: local('/plain') }, createFakeToolContext()),
      refused(/loopback/),
    );
    assert.equal(
      (await operatorAllows(`127.0.0.1:${port}`).execute({ url: local('/plain') }, createFakeToolContext())).content[1]!.text,
      'just text',
    );
  });

  it('refuses non-http schemes, credentials and garbage', async () => {
    const ctx = createFakeToolContext();
    await assert.rejects(fetchTool.execute({ url: 'file:///etc/passwd' }, ctx), refused(/Only http and https/));
    await assert.rejects(fetchTool.execute({ url: 'http://user:pw@example.com/' }, ctx), refused(/credentials/));
    await assert.rejects(fetchTool.execute({ url: 'not a url' }, ctx), refused(/Invalid URL/));
  });
});

describe('fetch_url on a local server the operator allowlisted', () => {
  it('converts HTML to Markdown, dropping scripts', async () => {
    const result = await localFetch.execute({ url: local('/page') }, allowLocal());
    assert.deepEqual(meta(result), {
      url: local('/page'),
      status: 200,
      status_text: 'OK',
      content_type: 'text/html; charset=utf-8',
      bytes: Buffer.byteLength(PAGE),
      truncated: false,
      redirects: [],
      kind: 'html',
    });
    assert.equal(result.content[1]!.text, '# Hello\n\nA [link](https://x.test/).');
  });

  it('returns text or raw HTML on request', async () => {
    assert.equal((await localFetch.execute({ url: local('/page'), format: 'text' }, allowLocal())).content[1]!.text, 'Hello\nA link.');
    assert.match((await localFetch.execute({ url: local('/page'), format: 'raw' }, allowLocal())).content[1]!.text, /^<html>/);
  });

  it('follows redirects and reports them', async () => {
    const result = await localFetch.execute({ url: local('/to-page') }, allowLocal());
    assert.equal(meta(result)['url'], local('/page'));
    assert.deepEqual(meta(result)['redirects'], [local('/page')]);
  });

  it('caps redirects', async () => {
    await assert.rejects(
      localFetch.execute({ url: local('/loop') }, allowLocal({ max_redirects: 3 })),
      refused(/Too many redirects \(more than 3\)/),
    );
  });

  it('truncates at max_bytes and flags it', async () => {
    const result = await localFetch.execute({ url: local('/big') }, allowLocal({ max_bytes: 100 }));
    assert.equal(meta(result)['truncated'], true);
    assert.equal(meta(result)['bytes'], 100);
    assert.equal(result.content[1]!.text, 'x'.repeat(100));
  });

  it('applies the cap after decompression', async () => {
    const result = await localFetch.execute({ url: local('/gzip') }, allowLocal({ max_bytes: 1000 }));
    assert.equal(meta(result)['truncated'], true);
    assert.equal(result.content[1]!.text, 'y'.repeat(1000));
    assert.equal((await localFetch.execute({ url: local('/gzip') }, allowLocal())).content[1]!.text, 'y'.repeat(3000));
  });

  it('times out after timeout_ms', async () => {
    const started = Date.now();
    await assert.rejects(localFetch.execute({ url: local('/hang') }, allowLocal({ timeout_ms: 200 })), refused(/timed out after 200 ms/));
    assert.ok(Date.now() - started < 2000);
  });

  it('passes a turn cancellation through as the abort reason, not a ToolError', async () => {
    const ctx = allowLocal();
    const reason = new Error('turn cancelled');
    setTimeout(() => ctx.abort.abort(reason), 50);
    await assert.rejects(localFetch.execute({ url: local('/hang') }, ctx), (e: unknown) => e === reason);
  });

  it('returns error statuses as results, hides binary bodies, supports HEAD', async () => {
    const missing = await localFetch.execute({ url: local('/missing') }, allowLocal());
    assert.equal(meta(missing)['status'], 404);
    assert.equal(missing.content[1]!.text, 'not here');
    const binary = await localFetch.execute({ url: local('/binary') }, allowLocal());
    assert.equal(meta(binary)['kind'], 'binary');
    assert.equal(binary.content[1]!.text, 'Binary content; not shown.');
    const head = await localFetch.execute({ url: local('/plain'), method: 'HEAD' }, allowLocal());
    assert.equal(meta(head)['status'], 200);
    assert.deepEqual(meta(head)['headers'], { 'content-type': 'text/plain' });
    assert.equal(meta(head)['bytes'], 0);
    assert.equal(head.content.length, 1);
  });

  it('a body of NULs is binary whatever its declared type; a stray NUL in text is dropped; UTF-16 zero bytes are no NULs', async () => {
    for (const path of ['/nul-html', '/late-nul']) {
      const r = await localFetch.execute({ url: local(path) }, allowLocal());
      assert.equal(meta(r)['kind'], 'binary', path);
      assert.equal(r.content[1]!.text, 'Binary content; not shown.', path);
    }
    const sparse = await localFetch.execute({ url: local('/sparse-nul') }, allowLocal());
    assert.equal(meta(sparse)['kind'], 'text');
    assert.equal(sparse.content[1]!.text, `${'a'.repeat(9000)}bc`);
    const utf16 = await localFetch.execute({ url: local('/utf16') }, allowLocal());
    assert.equal(utf16.content[1]!.text, 'hi there');
  });

  it('converts at most maxConvertChars of HTML, cut before a tag, and flags the result truncated; raw returns it all', async () => {
    const capped = await operatorAllows('127.0.0.1', { maxConvertChars: 1000 }).execute({ url: local('/long-page') }, allowLocal());
    assert.equal(meta(capped)['truncated'], true);
    const text = capped.content[1]!.text!;
    assert.match(text, /^lorem ipsum dolor sit amet\n\nlorem/);
    assert.ok(text.length < 1000, `${text.length} chars`);
    assert.ok(text.endsWith('lorem ipsum dolor sit amet'), 'no half paragraph or tag');

    const started = Date.now();
    const byDefault = await localFetch.execute({ url: local('/long-page') }, allowLocal());
    assert.ok(Date.now() - started < 20_000, `converting took ${Date.now() - started} ms`);
    assert.equal(meta(byDefault)['truncated'], true);
    assert.ok(byDefault.content[1]!.text!.length < 128 * 1024);
    const raw = await localFetch.execute({ url: local('/long-page'), format: 'raw' }, allowLocal());
    assert.equal(meta(raw)['truncated'], false);
    assert.equal(raw.content[1]!.text!.length, LONG_BODY.length + 26);
  });

  it('reports connection failures as tool errors', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const deadPort = (closed.address() as AddressInfo).port;
    closed.close();
    await assert.rejects(
      localFetch.execute({ url: `http://127.0.0.1:${deadPort}/` }, allowLocal()),
      refused(/request failed: .*ECONNREFUSED/),
    );
  });
});
