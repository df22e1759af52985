import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { APIConnectionTimeoutError, APIUserAbortError, OpenAI } from 'openai';
import { partsBody, responseBody, vendorFetch } from '../../src/llm/vendor-fetch.js';

/**
 * vendorFetch is what the vendor SDKs send through (decision 0113): it must answer as `fetch`
 * does for everything the SDKs read, and keep an event stream's body as a Node stream.
 */
describe('vendorFetch - the SDKs fetch over undici request', () => {
  const received: { method: string; headers: IncomingMessage['headers']; body: Buffer }[] = [];
  let origin = '';
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    received.push({ method: req.method!, headers: req.headers, body: Buffer.concat(chunks) });
    const [, what] = req.url!.split('/');
    if (what === 'stream') {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'x-request-id': 'req_1' });
      res.write('data: one\n\n');
      res.end('data: two\n\n');
    } else if (what === 'v1') {
      setTimeout(() => res.writeHead(200, { 'content-type': 'text/event-stream' }).end('data: [DONE]\n\n'), 1_000).unref();
    } else if (what === 'reset') {
      res.writeHead(205).end();
    } else if (what === 'error') {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '3' }).end('{"error":{"code":"rate_limit_exceeded"}}');
    } else {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[1,2]}');
    }
  });
  before(async () => {
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());

  test('an event stream stays a Node stream for responseBody, with the answer status and headers', async () => {
    const response = await vendorFetch(`${origin}/stream`, { method: 'POST', headers: new Headers({ authorization: 'Bearer k' }) });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('x-request-id'), 'req_1');
    const body = responseBody(response);
    assert.ok(body instanceof Readable, 'the body is not a Node stream');
    let text = '';
    for await (const chunk of body) text += String(chunk);
    assert.equal(text, 'data: one\n\ndata: two\n\n');
    assert.equal(received.at(-1)!.headers.authorization, 'Bearer k');
  });

  test('an SDK that reads response.body of an event stream gets the same bytes as a web stream', async () => {
    const response = await vendorFetch(`${origin}/stream`);
    const web = response.body;
    assert.ok(web instanceof ReadableStream);
    assert.equal(await new Response(web).text(), 'data: one\n\ndata: two\n\n');
    assert.equal(responseBody(response), web, 'the Node stream was handed out after the web stream took it');
  });

  test('JSON and error answers are whole standard Responses; a 205 has no body', async () => {
    const json = await vendorFetch(`${origin}/json`);
    assert.deepEqual(await json.json(), { data: [1, 2] });
    const error = await vendorFetch(`${origin}/error`, { method: 'POST', body: '{}' });
    assert.equal(error.status, 429);
    assert.equal(error.headers.get('retry-after'), '3');
    assert.deepEqual(await error.json(), { error: { code: 'rate_limit_exceeded' } });
    const reset = await vendorFetch(`${origin}/reset`, { method: 'POST', body: '{}' });
    assert.equal(reset.status, 205);
    assert.equal(reset.body, null);
  });

  test('a parts body is sent as its bytes, in order, with the length the caller set', async () => {
    const parts = [Buffer.from('{"a":'), Buffer.from('"日本"'), Buffer.from('}')];
    const length = String(parts.reduce((n, p) => n + p.length, 0));
    const body = partsBody(parts);
    await (await vendorFetch(`${origin}/json`, { method: 'POST', body, headers: { 'content-length': length } })).text();
    const got = received.at(-1)!;
    assert.equal(got.method, 'POST');
    assert.deepEqual(got.body, Buffer.concat(parts));
    assert.equal(got.headers['content-length'], length);
    assert.equal(got.headers['transfer-encoding'], undefined);
  });

  test('through the SDK, an abort and a timeout before the answer are the SDK errors fetch gave', async () => {
    const client = (timeout?: number) =>
      new OpenAI({ apiKey: 'k', baseURL: `${origin}/v1`, maxRetries: 0, fetch: vendorFetch, ...(timeout ? { timeout } : {}) });
    const ac = new AbortController();
    setTimeout(() => ac.abort(new Error('user cancelled')), 50);
    await assert.rejects(client().post('/chat/completions', { body: {}, stream: true, signal: ac.signal }).asResponse(), APIUserAbortError);
    await assert.rejects(client(100).post('/chat/completions', { body: {}, stream: true }).asResponse(), APIConnectionTimeoutError);
  });
});
