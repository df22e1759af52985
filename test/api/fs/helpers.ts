import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import type { ServiceEndpoint } from '../../helpers/app.js';
import { GENERIC_HARNESS_ID } from '../../../src/api/harnesses/index.js';

/** Creates a session on the generic harness with the given capabilities; returns its id. */
export async function createSession(
  app: ServiceEndpoint,
  capabilities: unknown[] = ['session_file_system'],
  key?: string,
): Promise<string> {
  const r = await app.request('POST', '/v1/sessions', { body: { harness_id: GENERIC_HARNESS_ID, capabilities }, ...(key ? { key } : {}) });
  assert.equal(r.status, 201, r.text);
  return r.body.id;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  json(): any;
}

/**
 * One request with the path sent exactly as given (fetch would resolve `..` and `%2e%2e`
 * before sending, which hides what the server does with them).
 */
export function rawRequest(
  app: ServiceEndpoint,
  method: string,
  path: string,
  body?: Buffer | string,
  headers: Record<string, string> = {},
): Promise<RawResponse> {
  const url = new URL(app.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, method, path, headers: { authorization: `Bearer ${app.adminKey}`, ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const buf = Buffer.concat(chunks);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: buf, json: () => JSON.parse(buf.toString('utf8')) });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Uploads a file through POST /v1/sessions/{id}/fs/{path}. */
export function upload(app: ServiceEndpoint, sessionId: string, path: string, content: string | Uint8Array, contentType = 'text/plain') {
  return app.request('POST', `/v1/sessions/${sessionId}/fs/${path.replace(/^\//, '')}`, {
    raw: content,
    headers: { 'content-type': contentType },
  });
}

export interface ToolOutcome {
  name: string;
  success: boolean;
  /** The tool's JSON result (parsed from its first text part), or the error text. */
  result: any;
  error?: string;
}

/**
 * Runs one turn whose llmsim reply calls the given tools (`@tool NAME {JSON}` lines, run in
 * parallel), waits for the turn to end, and returns the tool results in request order.
 */
export async function runTools(
  app: ServiceEndpoint,
  sessionId: string,
  calls: [string, unknown][],
  { timeoutMs = 20_000, key = app.adminKey } = {},
): Promise<ToolOutcome[]> {
  const ended = async () => (await listAll(app, sessionId, key)).filter((e) => e.type === 'session.idled').length;
  const before = await ended();
  const text = calls.map(([name, args]) => `@tool ${name} ${JSON.stringify(args)}`).join('\n');
  const sent = await app.request('POST', `/v1/sessions/${sessionId}/messages`, {
    key,
    body: { message: { content: [{ type: 'text', text }] } },
  });
  assert.equal(sent.status, 201, sent.text);
  const deadline = Date.now() + timeoutMs;
  while ((await ended()) <= before) {
    if (Date.now() > deadline) throw new Error('timed out waiting for the turn to end');
    await new Promise((r) => setTimeout(r, 50));
  }
  const events = await listAll(app, sessionId, key);
  const turnId = events.filter((e) => e.type === 'turn.started').at(-1)!.data.turn_id;
  const requested = events.find((e) => e.type === 'output.message.completed' && e.context.turn_id === turnId)!.data.message.content as {
    id: string;
    name: string;
  }[];
  const done = events.filter((e) => e.type === 'tool.completed' && e.context.turn_id === turnId);
  return requested.map((call) => {
    const c = done.find((e) => e.data.tool_call_id === call.id)!;
    assert.ok(c, `no tool.completed for ${call.name}`);
    if (!c.data.success) return { name: call.name, success: false, result: null, error: c.data.error };
    const textPart = c.data.result[0]?.text ?? '';
    let result: unknown = textPart;
    try {
      result = JSON.parse(textPart);
    } catch {
      // plain text result
    }
    return { name: call.name, success: true, result };
  });
}

/** Every stored event of a session. */
export async function listAll(app: ServiceEndpoint, sessionId: string, key = app.adminKey): Promise<any[]> {
  const out: any[] = [];
  for (;;) {
    const since = out.at(-1)?.id;
    const r = await app.request('GET', `/v1/sessions/${sessionId}/events?limit=1000${since ? `&since_id=${since}` : ''}`, { key });
    assert.equal(r.status, 200, r.text);
    out.push(...r.body.data);
    if (r.body.data.length < 1000) return out;
  }
}
