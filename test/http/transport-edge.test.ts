import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Writable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import { ErrorResponse } from '../../schemas/common.js';
import { createHttpServer, createPipeline, createRouter, createValidation, route, type Authenticate } from '../../src/http/index.js';
import { createLogger } from '../../src/log.js';

/**
 * What uWebSockets.js answers by itself, before any of our code runs, pinned with raw sockets
 * (fetch would refuse to send most of these).
 * docs/decisions/0040-transport-edge.md lists the same table; a library upgrade that changes it fails here first.
 */

const routes = [
  route(
    {
      method: 'GET',
      path: '/v1/ping',
      auth: 'none',
      summary: 'ping',
      tags: ['t'],
      schema: { response: { 200: Type.Object({}) } },
    },
    async () => {
      return { status: 200, body: { ok: true } };
    },
  ),
];

interface RawAnswer {
  text: string;
  /** How the exchange ended: the server closed, or our deadline passed with the socket open. */
  ended: 'closed' | 'deadline';
  ms: number;
}

/** Writes `payload` as is and collects what comes back until the server closes or `deadlineMs`. */
function raw(port: number, payload: string | Buffer, deadlineMs: number): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = connect(port, '127.0.0.1');
    let text = '';
    let settled = false;
    const finish = (ended: RawAnswer['ended']) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ text, ended, ms: Date.now() - started });
    };
    const timer = setTimeout(() => finish('deadline'), deadlineMs);
    socket.on('data', (d) => (text += d.toString('latin1')));
    socket.on('close', () => finish('closed'));
    socket.on('error', () => finish('closed'));
    socket.write(payload);
  });
}

const statusOf = (a: RawAnswer) => Number(/^HTTP\/1\.1 (\d{3})/.exec(a.text)?.[1] ?? 0);
const request = (head: string) => `GET /v1/ping HTTP/1.1\r\nHost: t\r\n${head}\r\n`;

describe('transport edge (uWebSockets.js answers before the pipeline)', () => {
  let port = 0;
  let close: () => Promise<void>;

  before(async () => {
    const log = createLogger(
      'silent',
      new Writable({
        write(_c, _e, cb) {
          cb();
        },
      }),
    );
    const router = createRouter(routes);
    const authenticate: Authenticate = async () => ({ org_id: 'o', user_id: 'u', role: 'admin', operator: false, via: 'api_key' });
    const pipeline = createPipeline({ router, validation: createValidation([ErrorResponse]), authenticate });
    const server = createHttpServer(
      { host: '127.0.0.1', port: 0, maxBodyBytes: 2048, sse: { heartbeatMs: 1000, cycleMs: 10000, maxBufferBytes: 10000 } },
      { log, router, pipeline },
    );
    port = await server.listen();
    close = () => server.close(1000);
  });
  after(() => close());

  it('our responses carry no library banner header', async () => {
    const a = await raw(port, request('Connection: close\r\n'), 5000);
    assert.equal(statusOf(a), 200, a.text);
    assert.doesNotMatch(a.text, /^uWebSockets:/im, 'no `uWebSockets: 20` header (silent mode)');
    assert.doesNotMatch(a.text, /^Server:/im);
  });

  it('the library answers by itself: 505 for HTTP/1.0, 431 past 4 KiB of headers, 400 for framing errors; then closes', async () => {
    const cases: [string, string | Buffer, number][] = [
      ['HTTP/1.0', 'GET /v1/ping HTTP/1.0\r\nHost: t\r\n\r\n', 505],
      ['an HTTP/2 preface', 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 505],
      ['bare LF line ends', 'GET /v1/ping HTTP/1.1\nHost: t\n\n', 505],
      ['a 5 KB header', request(`X-Big: ${'a'.repeat(5000)}\r\n`), 431],
      ['a 5 KB URL', `GET /v1/${'a'.repeat(5000)} HTTP/1.1\r\nHost: t\r\n\r\n`, 431],
      ['200 headers', request(Array.from({ length: 200 }, (_, i) => `X-${i}: v\r\n`).join('')), 431],
      [
        'Content-Length with Transfer-Encoding',
        'POST /v1/ping HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
        400,
      ],
      ['a malformed chunk', 'POST /v1/ping HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n\r\n', 400],
      ['a negative Content-Length', 'POST /v1/ping HTTP/1.1\r\nHost: t\r\nContent-Length: -1\r\n\r\n', 400],
    ];
    const answers = await Promise.all(cases.map(([, payload]) => raw(port, payload, 5000)));
    cases.forEach(([name, , status], i) => {
      const a = answers[i]!;
      assert.equal(statusOf(a), status, `${name}: ${a.text.slice(0, 120)}`);
      assert.match(a.text, /^Connection: close/im, `${name}: the library closes after its own answer`);
      assert.equal(a.ended, 'closed', name);
    });
  });

  it('control bytes in a header: no answer and no handler call, the socket closes on the idle timeout; others are served meanwhile', async () => {
    // uWS neither answers nor closes at once (nothing in its API reaches these requests): the
    // connection idles until its HTTP idle timeout (10 s, checked every 4 s).
    const stalled = ['X-A: a\x00b\r\n', 'X-A: a\x01b\r\n', 'X-A: a\rb\r\n', 'X A: b\r\n'].map((h) => raw(port, request(h), 20_000));
    const t0 = Date.now();
    const ok = await raw(port, request('Connection: close\r\n'), 2000);
    assert.equal(statusOf(ok), 200, 'a well-formed request on another connection is answered at once');
    assert.ok(Date.now() - t0 < 1000);
    for (const a of await Promise.all(stalled)) {
      assert.equal(a.ended, 'closed', 'closed by the server, not left open');
      assert.equal(a.text, '', 'no answer, in particular no 5xx');
      assert.ok(a.ms < 16_000, `closed after ${a.ms} ms`);
    }
    // DEL and bytes >= 0x80 are not control bytes to uWS: such requests reach the pipeline.
    const del = await raw(port, request('X-A: a\x7fb\r\nConnection: close\r\n'), 2000);
    assert.equal(statusOf(del), 200);
  });
});
