/**
 * MCP tools in real turns, through the HTTP API, on both buses: an agent with the `mcp`
 * capability, the built-in llmsim asking for `demo__*` tools, a real MCP server (official SDK)
 * on loopback, reachable only because the operator allows it (MCP_ALLOWED_PRIVATE_HOSTS).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startTestApp, type TestApp } from '../../helpers/app.js';
import { createSession, listEvents, sendMessage, watch, type StoredEvent } from '../../turns/helpers.js';
import { startDemoServer } from './mcp-server.js';

const TOKEN = 'mcp-tok-7f3a9c2e51b84d06';

async function runTurn(app: TestApp, sse: Awaited<ReturnType<typeof watch>>, id: string, text: string): Promise<StoredEvent[]> {
  const before = sse.events().filter((e) => e.type === 'session.idled').length;
  assert.equal((await sendMessage(app, id, text)).status, 201);
  const events = await sse.until('session.idled', before + 1, 30_000);
  const turnId = events.filter((e) => e.type === 'turn.started').at(-1)!.data['turn_id'];
  return events.filter((e) => e.context['turn_id'] === turnId || e.data['turn_id'] === turnId);
}

const completed = (events: StoredEvent[]) => events.filter((e) => e.type === 'tool.completed').map((e) => e.data);

for (const mode of ['pglite', 'nats'] as const) {
  describe(`mcp tools in turns (${mode})`, () => {
    it('list, call, error result, list change, cancel mid-call, a hang, a flood, a header secret that never shows', async (t) => {
      const demo = await startDemoServer(t);
      // Long enough that the size cap, not the deadline, stops the flood: the demo server encodes
      // 10 MB in this process, which a loaded 2-core CI took over 1.5 s to start sending.
      const app = await startTestApp(t, { mode, env: { MCP_ALLOWED_PRIVATE_HOSTS: '127.0.0.1', MCP_CALL_TIMEOUT_MS: 6000 } });
      const config = { servers: [{ name: 'demo', url: demo.url, headers: { Authorization: 'Bearer {{secret:MCP_TOKEN}}' } }] };
      const { id } = await createSession(app, { capabilities: [{ ref: 'mcp', config }] });
      const put = await app.request('PUT', `/v1/sessions/${id}/storage/secrets`, {
        body: { secrets: { MCP_TOKEN: { value: TOKEN, allowed_hosts: ['127.0.0.1'] } } },
      });
      assert.equal(put.status, 200, put.text);
      const sse = await watch(app, id);
      t.after(() => sse.close());

      await t.test('a call: the server gets the secret header; the echoed value is redacted from the result', async () => {
        const [echo] = completed(await runTurn(app, sse, id, '@tool demo__echo {"text":"hello"}'));
        assert.equal(echo!['success'], true, JSON.stringify(echo));
        assert.equal(echo!['tool_name'], 'demo__echo');
        assert.deepEqual(echo!['result'], [{ type: 'text', text: 'echo: hello; auth=Bearer [secret:MCP_TOKEN]' }]);
        assert.equal(demo.authorizations.at(-1), `Bearer ${TOKEN}`, 'the server received the real value');
      });

      await t.test('an isError result is tool.completed with success false (the echoed secret redacted)', async () => {
        const [fail] = completed(await runTurn(app, sse, id, '@tool demo__fail {}'));
        assert.equal(fail!['success'], false);
        assert.equal(fail!['status'], 'error');
        assert.equal(fail!['error'], 'MCP server "demo" reported an error: no luck for Bearer [secret:MCP_TOKEN]');
      });

      await t.test('a tool added on the server is offered once the server says tools/list_changed', async () => {
        const [before] = completed(await runTurn(app, sse, id, '@tool demo__late {}'));
        assert.equal(before!['error'], 'Unknown tool: demo__late');
        demo.addLateTool();
        await new Promise((r) => setTimeout(r, 300)); // the notification travels on the session's GET stream
        const [after] = completed(await runTurn(app, sse, id, '@tool demo__late {}'));
        assert.deepEqual(after!['result'], [{ type: 'text', text: 'late tool ran' }], JSON.stringify(after));
      });

      await t.test('cancel mid-call: the turn is cancelled and the server sees the MCP cancellation', async () => {
        const count = (type: string) => sse.events().filter((e) => e.type === type).length;
        const [cancelledBefore, startedBefore, idledBefore, turnsCancelled] = [
          demo.cancelled.length,
          count('tool.started'),
          count('session.idled'),
          count('turn.cancelled'),
        ];
        assert.equal((await sendMessage(app, id, '@tool demo__slow {}')).status, 201);
        await sse.until('tool.started', startedBefore + 1, 15_000);
        while (demo.slowStarted.length <= cancelledBefore) await new Promise((r) => setTimeout(r, 20));
        const cancel = await app.request('POST', `/v1/sessions/${id}/cancel`);
        assert.ok(cancel.status < 300, cancel.text);
        await sse.until('turn.cancelled', turnsCancelled + 1, 15_000);
        for (let i = 0; i < 100 && demo.cancelled.length === cancelledBefore; i++) await new Promise((r) => setTimeout(r, 20));
        assert.equal(demo.cancelled.length, cancelledBefore + 1, 'notifications/cancelled reached the server');
        await sse.until('session.idled', idledBefore + 1, 15_000);
      });

      await t.test('a tool that never answers fails at MCP_CALL_TIMEOUT_MS; one that answers 10 MB fails at the cap', async () => {
        const [hang] = completed(await runTurn(app, sse, id, '@tool demo__hang {}'));
        assert.equal(hang!['error'], 'MCP server "demo" did not answer within 6000 ms.');
        const [flood] = completed(await runTurn(app, sse, id, '@tool demo__flood {}'));
        assert.equal(flood!['error'], 'MCP server "demo" answered more than 1048576 bytes (MCP_MAX_RESPONSE_BYTES).');
        const [echo] = completed(await runTurn(app, sse, id, '@tool demo__echo {"text":"still fine"}'));
        assert.equal(echo!['success'], true, 'the next call works on a new connection');
      });

      await t.test('the secret value is in no event, SSE frame or log line', async () => {
        const stored = JSON.stringify(await listEvents(app, id));
        const frames = JSON.stringify(sse.conn.events);
        for (const [where, text] of [
          ['events', stored],
          ['sse', frames],
          ['logs', app.logs.join('\n')],
        ] as const) {
          assert.equal(text.includes(TOKEN), false, `${where} hold the secret`);
        }
        assert.ok(stored.includes('[secret:MCP_TOKEN]'));
      });
    });
  });
}

describe('mcp configuration (postgres)', () => {
  it('a loopback MCP server URL is refused with 422 without the operator setting', async (t) => {
    const demo = await startDemoServer(t);
    const app = await startTestApp(t, { mode: 'postgres' });
    const body = (url: string) => ({
      name: 'a',
      system_prompt: 'x',
      capabilities: [{ ref: 'mcp', config: { servers: [{ name: 'local', url }] } }],
    });
    const r = await app.request('POST', '/v1/agents', { body: body(demo.url) });
    assert.equal(r.status, 422, r.text);
    assert.match(r.body.error, /servers\.0\.url points to 127\.0\.0\.1, a loopback address.*MCP_ALLOWED_PRIVATE_HOSTS/);
    const bad = await app.request('POST', '/v1/agents', {
      body: { ...body('https://mcp.example.com/mcp'), capabilities: [{ ref: 'mcp', config: { servers: [{ name: '1bad', url: 'x' }] } }] },
    });
    assert.equal(bad.status, 422, bad.text);
    const ok = await app.request('POST', '/v1/agents', { body: body('https://mcp.example.com/mcp') });
    assert.equal(ok.status, 201, ok.text);
    const cap = await app.request('GET', '/v1/capabilities/mcp');
    assert.equal(cap.status, 200);
    assert.deepEqual(Object.keys(cap.body.config_schema.properties), ['servers']);
    assert.equal(demo.sessions(), 0);
  });
});
