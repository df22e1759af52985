import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createWebFetchCapability } from '../../../src/capabilities/web-fetch/capability.js';
import { parseHostAllowlist } from '../../../src/capabilities/web-fetch/address-policy.js';
import { ToolError } from '../../../src/capabilities/types.js';
import { withoutConnections } from '../../../src/session-storage/tool-context.js';
import { createFakeToolContext, toolOf } from '../fakes.js';

const TOKEN = 'tok-9f3a-request-headers-secret';
// The local origins are loopback: reachable only through the operator's allowlist.
const fetchTool = toolOf(createWebFetchCapability({ allowPrivateHosts: parseHostAllowlist('127.0.0.1') }), 'fetch_url');
const refused = (pattern: RegExp) => (e: unknown) => e instanceof ToolError && pattern.test(e.message) && !e.message.includes(TOKEN);

/** Two local origins (two ports): `/echo` records the headers; `/away` redirects to the other origin. */
let first: Server;
let second: Server;
let seen: { origin: string; headers: IncomingHttpHeaders }[] = [];
let secondOrigin = '';
let firstOrigin = '';

function recorder(name: () => string): Server {
  return createServer((req, res) => {
    seen.push({ origin: name(), headers: req.headers });
    if (req.url === '/away') return void res.writeHead(302, { location: `${secondOrigin}/echo` }).end();
    if (req.url === '/here') return void res.writeHead(302, { location: '/echo' }).end();
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  });
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

before(async () => {
  first = recorder(() => firstOrigin);
  second = recorder(() => secondOrigin);
  firstOrigin = await listen(first);
  secondOrigin = await listen(second);
});
after(() => {
  for (const s of [first, second]) {
    s.closeAllConnections();
    s.close();
  }
});

async function contextWithSecret() {
  const ctx = createFakeToolContext();
  await ctx.secrets.set('API_TOKEN', { value: TOKEN, allowed_hosts: ['127.0.0.1'] });
  return ctx;
}

describe('fetch_url request headers with {{secret:NAME}}', () => {
  it('sends the secret value in the header; the result and the arguments never hold it', async () => {
    seen = [];
    const ctx = await contextWithSecret();
    const args = { url: `${firstOrigin}/echo`, headers: { Authorization: 'Bearer {{secret:API_TOKEN}}', 'X-Plain': 'v1' } };
    const result = await fetchTool.execute(args, ctx);
    assert.equal(seen.length, 1);
    assert.equal(seen[0]!.headers.authorization, `Bearer ${TOKEN}`);
    assert.equal(seen[0]!.headers['x-plain'], 'v1');
    assert.ok(!JSON.stringify(result).includes(TOKEN));
    assert.ok(!JSON.stringify(args).includes(TOKEN));
  });

  it('keeps the headers on a same-origin redirect and drops them on a redirect to another origin', async () => {
    seen = [];
    const ctx = await contextWithSecret();
    await fetchTool.execute({ url: `${firstOrigin}/here`, headers: { Authorization: 'Bearer {{secret:API_TOKEN}}' } }, ctx);
    assert.deepEqual(
      seen.map((s) => s.headers.authorization),
      [`Bearer ${TOKEN}`, `Bearer ${TOKEN}`],
    );
    seen = [];
    await fetchTool.execute({ url: `${firstOrigin}/away`, headers: { Authorization: 'Bearer {{secret:API_TOKEN}}' } }, ctx);
    assert.deepEqual(
      seen.map((s) => [s.origin, s.headers.authorization]),
      [
        [firstOrigin, `Bearer ${TOKEN}`],
        [secondOrigin, undefined],
      ],
    );
  });

  it('refuses unknown secrets, reserved or malformed headers and secrets with line breaks, without sending anything', async () => {
    seen = [];
    const ctx = await contextWithSecret();
    await ctx.secrets.set('MULTI', { value: `a\r\nX-Injected: ${TOKEN}`, allowed_hosts: ['127.0.0.1'] });
    const url = `${firstOrigin}/echo`;
    await assert.rejects(fetchTool.execute({ url, headers: { Authorization: '{{secret:NOPE}}' } }, ctx), refused(/secret "NOPE"/));
    await assert.rejects(fetchTool.execute({ url, headers: { Host: 'evil.test' } }, ctx), refused(/"host" cannot be set/));
    await assert.rejects(fetchTool.execute({ url, headers: { 'Proxy-Thing': 'x' } }, ctx), refused(/cannot be set/));
    await assert.rejects(fetchTool.execute({ url, headers: { 'bad name': 'x' } }, ctx), refused(/Invalid header name/));
    await assert.rejects(fetchTool.execute({ url, headers: { 'X-A': 'a\nb' } }, ctx), refused(/control characters/));
    await assert.rejects(fetchTool.execute({ url, headers: { 'X-A': '{{secret:MULTI}}' } }, ctx), refused(/line breaks/));
    assert.deepEqual(seen, []);
  });

  it('a connection secret the turn may not use reads as absent', async () => {
    const ctx = await contextWithSecret();
    await ctx.secrets.set('connection:github', { value: 'ghp_owner_only', allowed_hosts: ['127.0.0.1'] });
    const gated = { ...ctx, secrets: withoutConnections(ctx.secrets) };
    seen = [];
    await assert.rejects(
      fetchTool.execute({ url: `${firstOrigin}/echo`, headers: { Authorization: 'token {{secret:connection:github}}' } }, gated),
      refused(/connection:github/),
    );
    assert.equal(seen.length, 0, 'nothing was sent');
    await fetchTool.execute({ url: `${firstOrigin}/echo`, headers: { Authorization: 'token {{secret:connection:github}}' } }, ctx);
    assert.equal(seen[0]!.headers.authorization, 'token ghp_owner_only');
  });
});
