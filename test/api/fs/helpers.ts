import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import type { TestApp } from '../../helpers/app.js';
import { GENERIC_HARNESS_ID } from '../../../src/api/harnesses/index.js';

/** Creates a session on the generic harness with the given capabilities; returns its id. */
export async function createSession(app: TestApp, capabilities: unknown[] = ['session_file_system'], key?: string): Promise<string> {
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
export function rawRequest(app: TestApp, method: string, path: string, body?: Buffer | string, headers: Record<string, string> = {}): Promise<RawResponse> {
  const url = new URL(app.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, method, path, headers: { authorization: `Bearer ${app.adminKey}`, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const buf = Buffer.concat(chunks);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: buf, json: () => JSON.parse(buf.toString('utf8')) });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Uploads a file through POST /v1/sessions/{id}/fs/{path}. */
export function upload(app: TestApp, sessionId: string, path: string, content: string | Uint8Array, contentType = 'text/plain') {
  return app.request('POST', `/v1/sessions/${sessionId}/fs/${path.replace(/^\//, '')}`, { raw: content, headers: { 'content-type': contentType } });
}
