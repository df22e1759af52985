import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fromWebResponse, toWebRequest } from '../../../src/api/mcp-server/web-exchange.js';

/**
 * The adapter between the /v1/mcp route and the SDK's web-standard transport (decision 0094):
 * only the headers the SDK needs reach it (never the caller's credentials), a JSON-RPC answer
 * passes as it is, an accepted notification is a bodiless 202, a refusal takes the API's
 * `{error, status}` shape with the JSON-RPC message, and a 5xx is thrown (the error stage
 * answers it without naming anything).
 */
describe('mcp-server web exchange', () => {
  it('forwards Accept, Content-Type and the protocol version only', () => {
    const req = toWebRequest('http://mcp.local/v1/mcp', {
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
      'mcp-protocol-version': '2025-06-18',
      authorization: 'Bearer ass_secret',
      cookie: 'a=b',
    });
    assert.equal(req.method, 'POST');
    assert.deepEqual([...req.headers.keys()].sort(), ['accept', 'content-type', 'mcp-protocol-version']);
  });

  it('maps answers, notifications, refusals and failures', async () => {
    const answer = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { tools: [] } });
    assert.deepEqual(await fromWebResponse(new Response(answer, { status: 200, headers: { 'content-type': 'application/json' } })), {
      status: 200,
      raw: answer,
      contentType: 'application/json',
    });
    // The MCP session id issued at initialize goes to the client (it names the client for cancellation).
    const initialized = new Response(answer, { status: 200, headers: { 'content-type': 'application/json', 'mcp-session-id': 'abc' } });
    assert.deepEqual((await fromWebResponse(initialized)) as { headers?: unknown }, {
      status: 200,
      raw: answer,
      contentType: 'application/json',
      headers: { 'mcp-session-id': 'abc' },
    });
    assert.deepEqual(await fromWebResponse(new Response(null, { status: 202 })), { status: 202 });
    const refusal = JSON.stringify({
      jsonrpc: '2.0',
      error: { code: -32000, message: 'Not Acceptable: Client must accept both' },
      id: null,
    });
    assert.deepEqual(await fromWebResponse(new Response(refusal, { status: 406 })), {
      status: 406,
      body: { error: 'Not Acceptable: Client must accept both', status: 406 },
    });
    assert.deepEqual(await fromWebResponse(new Response('<html>', { status: 415 })), {
      status: 415,
      body: { error: 'Unsupported media type', status: 415 },
    });
    assert.deepEqual(await fromWebResponse(new Response('{}', { status: 404 })), {
      status: 400,
      body: { error: 'Invalid request', status: 400 },
    });
    await assert.rejects(fromWebResponse(new Response('boom: /srv/secret/path', { status: 500 })), /the MCP transport answered 500/);
  });
});
