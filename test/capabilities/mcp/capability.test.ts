import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createCapabilityRegistry, createMcpCapability, validateCapabilityRefs } from '../../../src/capabilities/index.js';
import { parseHostAllowlist } from '../../../src/capabilities/web-fetch/address-policy.js';
import { connectionKey, createMcpClientPool } from '../../../src/capabilities/mcp/client-pool.js';
import { mcpToolName } from '../../../src/capabilities/mcp/tool-names.js';
import { ToolError, type CapabilityConfig } from '../../../src/capabilities/types.js';
import { createFakeToolContext } from '../fakes.js';
import { startDemoServer, startGarbageServer, startHungServer, startListingServer } from './mcp-server.js';

const LOCAL = parseHostAllowlist('127.0.0.1');

function mcp(t: { after(fn: () => unknown): void }, options: Parameters<typeof createMcpCapability>[0] = {}) {
  const m = createMcpCapability({ allowPrivateHosts: LOCAL, listTimeoutMs: 1500, callTimeoutMs: 1500, ...options });
  t.after(() => m.close());
  return m.capability;
}

const servers = (...list: Record<string, unknown>[]): CapabilityConfig => ({ servers: list });

describe('mcp capability (real MCP servers over HTTP)', () => {
  it('tool names: server__tool, within ^[a-zA-Z0-9_-]{1,64}$, stable, distinct when rewritten', () => {
    assert.equal(mcpToolName('github', 'create_issue'), 'github__create_issue');
    const long = mcpToolName('srv', `a.${'x'.repeat(100)}`);
    assert.match(long, /^srv__a_x+_[0-9a-f]{8}$/);
    assert.equal(long.length, 64);
    assert.equal(mcpToolName('srv', `a.${'x'.repeat(100)}`), long, 'stable');
    assert.notEqual(mcpToolName('srv', 'a.b'), mcpToolName('srv', 'a_b'));
    for (const n of [mcpToolName('s', 'ünïcode tool/name'), mcpToolName('s', 'a'.repeat(300))]) assert.match(n, /^[a-zA-Z0-9_-]{1,64}$/);
  });

  it('lists, calls, maps results (structured, image, link), reports isError as a ToolError', async (t) => {
    const demo = await startDemoServer(t);
    const cap = mcp(t);
    const ctx = createFakeToolContext();
    const listed = await cap.dynamicTools!(servers({ name: 'demo', url: demo.url }), ctx);
    assert.equal(listed.prompt, '');
    const byName = new Map(listed.tools.map((tool) => [tool.name, tool]));
    assert.deepEqual([...byName.keys()].sort(), ['demo__echo', 'demo__fail', 'demo__flood', 'demo__hang', 'demo__slow', 'demo__weather']);
    assert.deepEqual(byName.get('demo__echo')!.parameters['required'], ['text']);
    assert.equal(byName.get('demo__weather')!.display_name, 'Weather');
    const echo = await byName.get('demo__echo')!.execute({ text: 'hi' }, ctx);
    assert.deepEqual(echo.content, [{ type: 'text', text: 'echo: hi; auth=' }]);
    const weather = await byName.get('demo__weather')!.execute({ city: 'Oslo' }, ctx);
    assert.deepEqual(
      weather.content.map((p) => p.text),
      [
        'Sunny in Oslo',
        '[image image/png, 4 bytes: not shown]',
        '[resource report: https://example.com/r]',
        '{"city":"Oslo","temperature_c":21}',
      ],
    );
    await assert.rejects(
      byName.get('demo__fail')!.execute({}, ctx),
      (e) => e instanceof ToolError && /reported an error: no luck/.test(e.message),
    );
    const bad = await byName
      .get('demo__echo')!
      .execute({ text: 42 }, ctx)
      .catch((e: unknown) => e);
    assert.ok(bad instanceof ToolError && /returned an error|reported an error/.test(bad.message), String(bad));
    assert.equal(demo.sessions(), 1, 'listing and calls share one MCP session');
  });

  it('allowed_tools limits what is offered; the SSE transport serves older servers (auto falls back)', async (t) => {
    const demo = await startDemoServer(t);
    const cap = mcp(t);
    const ctx = createFakeToolContext();
    const only = await cap.dynamicTools!(servers({ name: 'demo', url: demo.url, allowed_tools: ['echo', 'nope'] }), ctx);
    assert.deepEqual(
      only.tools.map((x) => x.name),
      ['demo__echo'],
    );
    const sse = await cap.dynamicTools!(servers({ name: 'old', url: demo.sseUrl, transport: 'sse', allowed_tools: ['echo'] }), ctx);
    assert.equal((await sse.tools[0]!.execute({ text: 'via sse' }, ctx)).content[0]!.text, 'echo: via sse; auth=');
    const auto = await cap.dynamicTools!(servers({ name: 'auto', url: demo.sseUrl, allowed_tools: ['echo'] }), ctx);
    assert.deepEqual(
      auto.tools.map((x) => x.name),
      ['auto__echo'],
      auto.prompt,
    );
    const sessions = demo.sessions();
    await cap.dynamicTools!(servers({ name: 'auto', url: demo.sseUrl, allowed_tools: ['echo'] }), ctx);
    assert.equal((await auto.tools[0]!.execute({ text: 'again' }, ctx)).content[0]!.text, 'echo: again; auth=');
    assert.equal(demo.sessions(), sessions, 'the fallen-back connection is kept and reused');
  });

  it('cancelling a call sends MCP cancellation: the server sees it, the call rejects with the abort reason', async (t) => {
    const demo = await startDemoServer(t);
    const cap = mcp(t, { callTimeoutMs: 10_000 });
    const ctx = createFakeToolContext();
    const slow = (await cap.dynamicTools!(servers({ name: 'demo', url: demo.url }), ctx)).tools.find((x) => x.name === 'demo__slow')!;
    const call = slow.execute({}, ctx);
    while (demo.slowStarted.length === 0) await new Promise((r) => setTimeout(r, 10));
    const reason = new Error('turn cancelled');
    ctx.abort.abort(reason);
    await assert.rejects(call, (e) => e === reason);
    for (let i = 0; i < 100 && demo.cancelled.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(demo.cancelled, demo.slowStarted);
  });

  it('a tool that never answers and one that answers 10 MB are tool errors within the deadline', async (t) => {
    const demo = await startDemoServer(t);
    const cap = mcp(t, { callTimeoutMs: 800 });
    const ctx = createFakeToolContext();
    const tools = new Map((await cap.dynamicTools!(servers({ name: 'demo', url: demo.url }), ctx)).tools.map((x) => [x.name, x]));
    const started = Date.now();
    await assert.rejects(
      tools.get('demo__hang')!.execute({}, ctx),
      (e) => e instanceof ToolError && /did not answer within 800 ms/.test(e.message),
    );
    assert.ok(Date.now() - started < 5000);
    // The size cap, not the deadline, must stop the flood: its own deadline is long (a loaded CI took > 800 ms to send 1 MB).
    const patient = mcp(t, { callTimeoutMs: 30_000 });
    const patientTools = new Map(
      (await patient.dynamicTools!(servers({ name: 'demo', url: demo.url }), ctx)).tools.map((x) => [x.name, x]),
    );
    await assert.rejects(
      patientTools.get('demo__flood')!.execute({}, ctx),
      (e) => e instanceof ToolError && /answered more than 1048576 bytes \(MCP_MAX_RESPONSE_BYTES\)/.test(e.message),
    );
    assert.equal(
      (await tools.get('demo__echo')!.execute({ text: 'after' }, ctx)).content[0]!.text,
      'echo: after; auth=',
      'a new connection serves the next call',
    );
  });

  it('hostile listings: no answer, not JSON-RPC, 10,000 tools, a 100 KB schema: a clear note, never a throw', async (t) => {
    const cap = mcp(t, { listTimeoutMs: 800 });
    const ctx = createFakeToolContext();
    const hung = await cap.dynamicTools!(servers({ name: 'hung', url: await startHungServer(t) }), ctx);
    assert.deepEqual(hung.tools, []);
    assert.match(hung.prompt, /MCP server "hung" did not answer within 800 ms\. Its tools are not available in this turn\./);
    const garbage = await cap.dynamicTools!(servers({ name: 'junk', url: await startGarbageServer(t) }), ctx);
    assert.match(garbage.prompt, /MCP server "junk" sent an answer that is not valid JSON-RPC/);
    const status999 = await cap.dynamicTools!(servers({ name: 'odd', url: await startGarbageServer(t, '{}', 999) }), ctx);
    assert.match(status999.prompt, /MCP server "odd" answered HTTP 999\./);
    const junkCalls = await startListingServer(t, () => [{ name: 'odd', inputSchema: { type: 'object' } }], '{"jsonrpc":"2.0","id":');
    const [odd] = (await cap.dynamicTools!(servers({ name: 'odd', url: junkCalls }), ctx)).tools;
    await assert.rejects(
      odd!.execute({}, ctx),
      (e) => e instanceof ToolError && e.message === 'MCP server "odd" sent an answer that is not valid JSON-RPC.',
    );
    const tiny = (n: number) => () => Array.from({ length: n }, (_, i) => ({ name: `t${i}`, inputSchema: { type: 'object' } }));
    const tenThousand = await cap.dynamicTools!(servers({ name: 'many', url: await startListingServer(t, tiny(10_000)) }), ctx);
    assert.deepEqual(tenThousand.tools, []);
    assert.match(
      tenThousand.prompt,
      /MCP server "many" answered more than 262144 bytes \(MCP_MAX_LIST_RESPONSE_BYTES\)\. Its tools are not available/,
    );
    const listed = await cap.dynamicTools!(servers({ name: 'many', url: await startListingServer(t, tiny(2000)) }), ctx);
    assert.equal(listed.tools.length, 128);
    assert.match(listed.prompt, /more than 128 tools: only the first 128 are offered \(MCP_MAX_TOOLS_PER_SERVER\)/);
    const huge = {
      type: 'object',
      properties: Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`p${i}`, { type: 'string', description: 'x'.repeat(40) }])),
    };
    const big = await startListingServer(t, () => [
      { name: 'big', inputSchema: huge },
      { name: 'small', inputSchema: { type: 'object' } },
    ]);
    const trimmed = await cap.dynamicTools!(servers({ name: 'big', url: big }), ctx);
    assert.deepEqual(
      trimmed.tools.map((x) => x.name),
      ['big__small'],
    );
    assert.match(
      trimmed.prompt,
      /MCP tool "big" of server "big" has an input schema over 16384 bytes \(MCP_MAX_TOOL_SCHEMA_BYTES\): not offered/,
    );
  });

  it('a loopback server is refused without the operator setting: on write (422 text) and on connect (after DNS)', async (t) => {
    const demo = await startDemoServer(t);
    const strict = createMcpCapability({ listTimeoutMs: 1500 });
    t.after(() => strict.close());
    const registry = createCapabilityRegistry({ capabilities: [strict.capability] });
    const write = (url: string) => () => validateCapabilityRefs([{ ref: 'mcp', config: servers({ name: 'x', url }) }], registry);
    assert.throws(
      write(demo.url),
      (e: Error & { status?: number }) =>
        e.status === 422 && /points to 127\.0\.0\.1, a loopback address.*MCP_ALLOWED_PRIVATE_HOSTS/.test(e.message),
    );
    assert.throws(write('http://localhost:1/mcp'), /loopback/);
    assert.throws(write('http://169.254.169.254/'), /cloud metadata|link-local/);
    assert.throws(write('ftp://example.com/'), /must match pattern|http or https/);
    assert.doesNotThrow(write('https://mcp.example.com/mcp'));
    assert.throws(
      () =>
        validateCapabilityRefs(
          [{ ref: 'mcp', config: servers({ name: 'a', url: 'https://a.example.com' }, { name: 'a', url: 'https://b.example.com' }) }],
          registry,
        ),
      /"a" is used twice/,
    );
    // A name resolving to loopback passes the write check; the connection refuses it.
    const viaDns = await strict.capability.dynamicTools!(
      servers({ name: 'dns', url: demo.url.replace('127.0.0.1', 'localhost.test') }),
      createFakeToolContext(),
    );
    assert.equal(demo.sessions(), 0);
    assert.match(viaDns.prompt, /MCP server "dns" (could not resolve host|points to)/);
    const loop = createMcpCapability({ listTimeoutMs: 1500, resolve: async () => [{ address: '127.0.0.1', family: 4 }] });
    t.after(() => loop.close());
    const pinned = await loop.capability.dynamicTools!(
      servers({ name: 'dns', url: demo.url.replace('127.0.0.1', 'mcp.example.com') }),
      createFakeToolContext(),
    );
    assert.match(pinned.prompt, /points to mcp\.example\.com \(127\.0\.0\.1\), a loopback address/);
    assert.equal(demo.sessions(), 0, 'nothing reached the server');
  });

  it("connections: shared for the same org and headers; one organisation's churn closes only its own", async (t) => {
    const demo = await startDemoServer(t);
    const pool = createMcpClientPool({
      allowPrivateHosts: LOCAL,
      maxResponseBytes: 1 << 20,
      maxListBytes: 1 << 18,
      toolsTtlMs: 60_000,
      connectTimeoutMs: 5000,
      maxConnections: 3,
      maxConnectionsPerOrg: 2,
      idleCloseMs: 60_000,
    });
    t.after(() => pool.close());
    const target = (token: string) => ({ url: new URL(demo.url), headers: { authorization: token }, transport: 'auto' as const });
    const open = (org: string, token: string) =>
      pool.connection(org, connectionKey(org, target(token)), target(token), AbortSignal.timeout(5000));
    const b = await open('org-b', 't1');
    assert.equal(await open('org-b', 't1'), b, 'same org and headers: one connection');
    assert.notEqual(await open('org-a', 't1'), b, 'another organisation never shares it');
    await open('org-a', 't2');
    await open('org-a', 't3');
    await open('org-a', 't4');
    assert.equal(pool.size(), 3);
    assert.equal(b.closed, false, "org-b's connection survived org-a's churn");
    assert.equal(await open('org-b', 't1'), b);
  });

  it('a header secret goes only to a host it allows; a refusal names the secret and host, never the value', async (t) => {
    const demo = await startDemoServer(t);
    const cap = mcp(t);
    const ctx = createFakeToolContext();
    await ctx.secrets.set('ELSEWHERE', { value: 'sk-elsewhere-0123456789', allowed_hosts: ['api.example.com'] });
    await ctx.secrets.set('HERE', { value: 'sk-here-0123456789', allowed_hosts: ['127.0.0.1'] });
    const refused = await cap.dynamicTools!(
      servers({ name: 'demo', url: demo.url, headers: { Authorization: 'Bearer {{secret:ELSEWHERE}}' } }),
      ctx,
    );
    assert.deepEqual(refused.tools, []);
    assert.match(refused.prompt, /The secret "ELSEWHERE" cannot be sent to 127\.0\.0\.1: it may be sent only to "api\.example\.com"/);
    assert.equal(refused.prompt.includes('sk-elsewhere'), false);
    const missing = await cap.dynamicTools!(
      servers({ name: 'demo', url: demo.url, headers: { Authorization: 'Bearer {{secret:NOPE}}' } }),
      ctx,
    );
    assert.match(missing.prompt, /names the secret "NOPE", which this session does not have/);
    assert.equal(demo.sessions(), 0, 'nothing was sent without the secret');
    const ok = await cap.dynamicTools!(servers({ name: 'demo', url: demo.url, headers: { Authorization: 'Bearer {{secret:HERE}}' } }), ctx);
    const echo = ok.tools.find((x) => x.name === 'demo__echo')!;
    assert.equal((await echo.execute({ text: 'x' }, ctx)).content[0]!.text, 'echo: x; auth=Bearer [secret:HERE]');
    assert.equal(demo.authorizations.at(-1), 'Bearer sk-here-0123456789');
  });
});
