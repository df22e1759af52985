/**
 * One HTTP(S) request to an address chosen beforehand. The TCP connection goes to that IP
 * (a fixed `lookup`), so a second DNS answer cannot swap it, while TLS still verifies the
 * certificate against the URL's host name. No proxy, no connection reuse, no redirects.
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { LookupFunction } from 'node:net';
import { pipeline, type Readable } from 'node:stream';
import zlib from 'node:zlib';

// Not `import http from 'node:http'`: an ES import of a built-in reads every export once, and
// http's lazy WebSocket getters then load undici (100-170 ms of a start on a busy host; issue 13
// item 7). The CommonJS objects are the same modules without that.
const http = process.getBuiltinModule('node:http');
const https = process.getBuiltinModule('node:https');

export interface PinnedRequestOptions {
  url: URL;
  method: 'GET' | 'HEAD' | 'POST';
  address: string;
  family: 4 | 6;
  headers: Record<string, string>;
  signal: AbortSignal;
  /** The request body (webhook deliveries POST one). */
  body?: Buffer;
}

export interface PinnedResponse {
  status: number;
  statusText: string;
  headers: IncomingHttpHeaders;
  /** Reads the (decompressed) body, keeping at most `maxBytes`; `truncated` when there was more. */
  readBody(maxBytes: number): Promise<{ body: Buffer; truncated: boolean }>;
  /** Drops the body and the connection. */
  discard(): void;
}

/** Sends the request and resolves once the response headers arrived. */
export function requestPinned(opts: PinnedRequestOptions): Promise<PinnedResponse> {
  const client = opts.url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(opts.url, {
      method: opts.method,
      headers: opts.headers,
      lookup: pinnedLookup(opts.address, opts.family),
      agent: false,
      signal: opts.signal,
    });
    req.once('error', reject);
    req.once('response', (res) => resolve(wrapResponse(res)));
    req.end(opts.body);
  });
}

function pinnedLookup(address: string, family: 4 | 6): LookupFunction {
  return (_hostname, options, callback) => {
    const cb = callback as (err: Error | null, address: unknown, family?: number) => void;
    if (typeof options === 'object' && options.all) cb(null, [{ address, family }]);
    else cb(null, address, family);
  };
}

function wrapResponse(res: IncomingMessage): PinnedResponse {
  return {
    status: res.statusCode ?? 0,
    statusText: res.statusMessage ?? '',
    headers: res.headers,
    readBody: (maxBytes) => readCapped(res, maxBytes),
    discard: () => res.destroy(),
  };
}

async function readCapped(res: IncomingMessage, maxBytes: number): Promise<{ body: Buffer; truncated: boolean }> {
  const stream = decoded(res);
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      const room = maxBytes - size;
      if (chunk.length > room) {
        if (room > 0) chunks.push(chunk.subarray(0, room));
        size += Math.max(room, 0);
        truncated = true;
        break;
      }
      chunks.push(chunk);
      size += chunk.length;
    }
  } finally {
    res.destroy();
  }
  return { body: Buffer.concat(chunks, size), truncated };
}

/** The body stream, decompressed per Content-Encoding (the size cap applies after decompression). */
function decoded(res: IncomingMessage): Readable {
  const encoding = String(res.headers['content-encoding'] ?? '')
    .trim()
    .toLowerCase();
  const decoder =
    encoding === 'gzip' || encoding === 'x-gzip'
      ? zlib.createGunzip()
      : encoding === 'deflate'
        ? zlib.createInflate()
        : encoding === 'br'
          ? zlib.createBrotliDecompress()
          : null;
  if (!decoder) return res;
  return pipeline(res, decoder, () => {
    /* errors surface through the iteration of the returned stream */
  });
}
