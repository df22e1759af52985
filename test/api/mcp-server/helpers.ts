import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  StreamableHTTPClientTransport,
  type StreamableHTTPClientTransportOptions,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { request, type TestApp } from '../../helpers/app.js';

/** The official SDK's client over Streamable HTTP against `/v1/mcp` (`fetch`: e.g. a load balancer between instances). */
export async function connect(app: TestApp, key: string, fetch?: StreamableHTTPClientTransportOptions['fetch']): Promise<Client> {
  const client = new Client({ name: 'test-client', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${app.url}/v1/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
    ...(fetch ? { fetch } : {}),
  });
  await client.connect(transport);
  return client;
}

export async function createAgent(app: TestApp, body: Record<string, unknown>, key = app.adminKey): Promise<string> {
  const r = await request(app.url, 'POST', '/v1/agents', { key, body: { system_prompt: 'You help.', ...body } });
  assert.equal(r.status, 201, r.text);
  return r.body.id;
}

export const textOf = (r: CallToolResult) => r.content.map((p) => (p.type === 'text' ? p.text : '')).join('');

/** The session a call just created (not `except`), once its turn has started. */
export async function newestSession(app: TestApp, except?: string): Promise<string> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const list = await app.request('GET', '/v1/sessions?limit=10');
    const s = list.body.data.find((x: { id: string; status: string }) => x.id !== except && x.status === 'active');
    if (s) return s.id;
    assert.ok(Date.now() < deadline, 'the call created its session');
    await new Promise((res) => setTimeout(res, 50));
  }
}
