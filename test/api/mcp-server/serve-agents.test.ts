import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { request, startTestApp } from '../../helpers/app.js';
import { createKey, createOrgWithAdmin, createUser, login } from '../auth/helpers.js';
import { listEvents, waitForStatus } from '../../turns/helpers.js';
import { connect, createAgent, newestSession, textOf } from './helpers.js';

/**
 * `/v1/mcp` (decision 0094, "Serving agents"): the organisation's agents as an MCP server,
 * talked to with the official SDK's own client over Streamable HTTP. Listing shows one tool per
 * active agent of the caller's organisation only; a call runs a turn in a new session of the
 * caller (or a given one) and answers with the final reply; without a key it is 401; a client
 * that goes away mid-call cancels the turn; a turn that waits for approval is answered at once.
 */
for (const mode of ['postgres', 'nats'] as const) {
  describe(`/v1/mcp: agents served to MCP clients (${mode})`, () => {
    it("lists the organisation's agents; a call runs a turn and answers with its reply; a session continues", async (t) => {
      const app = await startTestApp(t, { mode });
      const researcher = await createAgent(app, { name: 'researcher', description: 'Finds things out.' });
      await createAgent(app, { name: 'writer with spaces' });
      const other = await createOrgWithAdmin(app, 'Elsewhere');
      await createAgent(app, { name: 'secret-agent' }, other.key);

      const client = await connect(app, app.adminKey);
      t.after(() => client.close());
      const { tools } = await client.listTools();
      const names = tools.map((tool) => tool.name).sort();
      assert.ok(names.includes('agent__researcher'), names.join());
      assert.ok(!names.some((n) => n.includes('secret')), `another organisation's agent is invisible: ${names.join()}`);
      assert.ok(
        names.some((n) => /^agent__writer_with_spaces_[0-9a-f]{8}$/.test(n)),
        names.join(),
      );
      const tool = tools.find((x) => x.name === 'agent__researcher')!;
      assert.match(tool.description ?? '', /Finds things out\./);
      assert.deepEqual(Object.keys((tool.inputSchema as { properties: object }).properties).sort(), ['message', 'session_id']);

      const r = (await client.callTool({ name: 'agent__researcher', arguments: { message: 'hello from MCP' } })) as CallToolResult;
      assert.equal(r.isError, undefined, textOf(r));
      assert.match(textOf(r), /hello from MCP/, 'the final reply (llmsim echoes)');
      const { session_id: sessionId, turn_id: turnId } = r.structuredContent as { session_id: string; turn_id: string };
      const session = await app.request('GET', `/v1/sessions/${sessionId}`);
      assert.equal(session.body.agent_id, researcher);
      assert.deepEqual(session.body.tags, ['mcp']);
      // Answered once the session idled after the turn (not at turn.completed): a next message is not refused as busy.
      assert.equal(session.body.status, 'idle');
      const events = await listEvents(app, sessionId);
      assert.equal(events.find((e) => e.type === 'turn.completed')?.context['turn_id'], turnId);

      // The same session again: a second turn there.
      const again = (await client.callTool({
        name: 'agent__researcher',
        arguments: { message: 'and again', session_id: sessionId },
      })) as CallToolResult;
      assert.match(textOf(again), /and again/);
      assert.equal((again.structuredContent as { session_id: string }).session_id, sessionId);
      assert.equal((await listEvents(app, sessionId)).filter((e) => e.type === 'turn.completed').length, 2);

      // Refusals are tool errors the client reads, not protocol failures.
      const bad = (await client.callTool({ name: 'agent__researcher', arguments: { message: '' } })) as CallToolResult;
      assert.equal(bad.isError, true);
      const foreign = await request(app.url, 'POST', '/v1/sessions', {
        key: other.key,
        body: { agent_id: await createAgent(app, { name: 'x' }, other.key) },
      });
      const notYours = (await client.callTool({
        name: 'agent__researcher',
        arguments: { message: 'hi', session_id: foreign.body.id },
      })) as CallToolResult;
      assert.equal(notYours.isError, true);
      const foreignEvents = await request(app.url, 'GET', `/v1/sessions/${foreign.body.id}/events`, { key: other.key });
      assert.equal(foreignEvents.body.data.filter((e: { type: string }) => e.type === 'input.message').length, 0, 'nothing sent there');
      const unknown = (await client.callTool({ name: 'agent__secret-agent', arguments: { message: 'hi' } })) as CallToolResult;
      assert.equal(unknown.isError, true);
      assert.match(textOf(unknown), /agent__secret-agent not found/);
    });
  });
}

describe('/v1/mcp: authentication, members, approvals and cancellation', () => {
  it('401 without a key or with a wrong one; a member runs agents in sessions of their own', async (t) => {
    const app = await startTestApp(t);
    await createAgent(app, { name: 'helper' });
    for (const headers of [{}, { Authorization: 'Bearer nope' }] as Record<string, string>[]) {
      const r = await fetch(`${app.url}/v1/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      assert.equal(r.status, 401);
      assert.deepEqual(Object.keys((await r.json()) as object).sort(), ['error', 'status']);
    }
    const client = new Client({ name: 'anonymous', version: '1.0.0' });
    await assert.rejects(client.connect(new StreamableHTTPClientTransport(new URL(`${app.url}/v1/mcp`))), /401|Unauthorized/);

    // Not JSON-RPC, or no acceptable answer type: a 4xx in the API's error shape.
    const notRpc = await fetch(`${app.url}/v1/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${app.adminKey}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ hello: 'world' }),
    });
    assert.equal(notRpc.status, 400);
    assert.equal(((await notRpc.json()) as { status: number }).status, 400);
    const noAccept = await fetch(`${app.url}/v1/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${app.adminKey}`, 'content-type': 'application/json', accept: 'text/html' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    assert.equal(noAccept.status, 406);

    const member = await createUser(app, app.adminKey, 'member');
    const memberKey = (await createKey(app, (await login(app, member.email, member.password)).access_token)).key;
    const client2 = await connect(app, memberKey);
    t.after(() => client2.close());
    const r = (await client2.callTool({ name: 'agent__helper', arguments: { message: 'member here' } })) as CallToolResult;
    assert.match(textOf(r), /member here/);
    const sessionId = (r.structuredContent as { session_id: string }).session_id;
    const mine = await request(app.url, 'GET', `/v1/sessions/${sessionId}`, { key: memberKey });
    assert.equal(mine.status, 200, 'the session is the member’s own');
    // The admin's session is not the member's to continue.
    const adminSession = await app.request('POST', '/v1/sessions', { body: { agent_id: mine.body.agent_id } });
    const refused = (await client2.callTool({
      name: 'agent__helper',
      arguments: { message: 'hi', session_id: adminSession.body.id },
    })) as CallToolResult;
    assert.equal(refused.isError, true);
    assert.equal((await listEvents(app, adminSession.body.id)).filter((e) => e.type === 'input.message').length, 0);
  });

  it('a turn waiting for approval is answered at once, naming the session; a client that goes away cancels its turn', async (t) => {
    const app = await startTestApp(t);
    await createAgent(app, {
      name: 'careful',
      capabilities: ['current_time'],
      tool_approvals: [{ tool: 'get_current_time', policy: 'always_ask' }],
    });
    const client = await connect(app, app.adminKey);
    t.after(() => client.close());
    const r = (await client.callTool({ name: 'agent__careful', arguments: { message: '@tool get_current_time {}' } })) as CallToolResult;
    assert.equal(r.isError, true);
    const waitingIn = (r.structuredContent as { session_id: string }).session_id;
    assert.match(textOf(r), new RegExp(`approve get_current_time.*${waitingIn}`));
    await waitForStatus(app, waitingIn, 'waiting_for_tool_results');

    // A raw client that closes its request while the turn runs (`@sleep`): the turn is cancelled.
    const ac = new AbortController();
    const call = fetch(`${app.url}/v1/mcp`, {
      method: 'POST',
      signal: ac.signal,
      headers: {
        authorization: `Bearer ${app.adminKey}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'agent__careful', arguments: { message: '@sleep 20000' } },
      }),
    });
    const sessionId = await newestSession(app, waitingIn);
    ac.abort();
    await assert.rejects(call);
    const deadline = Date.now() + 15_000;
    while (!(await listEvents(app, sessionId)).some((e) => e.type === 'turn.cancelled')) {
      assert.ok(Date.now() < deadline, 'the turn was cancelled after the client left');
      await new Promise((res) => setTimeout(res, 50));
    }
  });
});
