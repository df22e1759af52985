/**
 * The `fetch` the MCP SDK's transports are given: each request's host is checked against the
 * address policy (address-check.ts) and the connection pinned to the checked address (a second
 * DNS answer cannot swap it; TLS still verifies the URL's host name), and each response body is
 * capped: past `maxResponseBytes` the body fails and `onViolation` is told, so a server that
 * floods or answers 10 MB costs at most that much memory and parse time. The answer to a
 * `tools/list` has a lower cap, `maxListBytes`: the SDK validates every tool of it on the event
 * loop (about 40-160 ms for 1 MB of 20,000 tiny tools on a loaded 2-core machine).
 */
import type { IncomingMessage } from 'node:http';
import type { LookupFunction } from 'node:net';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { HostRule } from '../web-fetch/address-policy.js';
import { systemResolver, type Resolver } from '../web-fetch/safe-fetch.js';
import { checkedAddress, McpAddressError } from './address-check.js';

// CommonJS objects, not ES imports: see pinned-request.ts (importing node:http loads undici).
const http = process.getBuiltinModule('node:http');
const https = process.getBuiltinModule('node:https');

export interface GuardedFetchOptions {
  /** The operator's private hosts (MCP_ALLOWED_PRIVATE_HOSTS). */
  allowPrivateHosts: readonly HostRule[];
  maxResponseBytes: number;
  maxListBytes: number;
  /** Told once, when a response body passes the cap. */
  onViolation(message: string): void;
  resolve?: Resolver;
}

export interface GuardedFetch {
  fetch: FetchLike;
  /** Closes the kept-alive connections. */
  close(): void;
}

interface Cap {
  bytes: number;
  /** The setting that sets it, named in the error. */
  setting: string;
}

const responseCap = (opts: GuardedFetchOptions): Cap => ({ bytes: opts.maxResponseBytes, setting: 'MCP_MAX_RESPONSE_BYTES' });

/** Statuses whose Response must have no body. */
const NULL_BODY = new Set([101, 204, 205, 304]);

/** One fetch per MCP connection: its keep-alive sockets serve only that connection's server. */
export function createGuardedFetch(opts: GuardedFetchOptions): GuardedFetch {
  const agents = {
    'http:': new http.Agent({ keepAlive: true, maxSockets: 8 }),
    'https:': new https.Agent({ keepAlive: true, maxSockets: 8 }),
  };
  const resolve = opts.resolve ?? systemResolver;
  const fetch: FetchLike = async (input, init = {}) => {
    const url = new URL(input);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new McpAddressError('must be an http or https URL');
    init.signal?.throwIfAborted();
    const target = await checkedAddress(url, opts.allowPrivateHosts, resolve);
    const client = url.protocol === 'https:' ? https : http;
    return new Promise<Response>((done, fail) => {
      const req = client.request(url, {
        method: init.method ?? 'GET',
        headers: Object.fromEntries(new Headers(init.headers).entries()),
        lookup: pinnedLookup(target.address, target.family),
        agent: agents[url.protocol as 'http:' | 'https:'],
        ...(init.signal ? { signal: init.signal } : {}),
      });
      req.once('error', fail);
      const listing = typeof init.body === 'string' && init.body.includes('"method":"tools/list"');
      const cap = listing
        ? { bytes: Math.min(opts.maxListBytes, opts.maxResponseBytes), setting: 'MCP_MAX_LIST_RESPONSE_BYTES' }
        : responseCap(opts);
      req.once('response', (res) => {
        // A status a Response cannot carry (Node's parser takes 100-999) must not throw in this callback.
        if (res.statusCode === undefined || res.statusCode < 200 || res.statusCode > 599) {
          res.destroy();
          return fail(Object.assign(new Error('unusable HTTP status'), { code: res.statusCode ?? 0 }));
        }
        done(toResponse(res, cap, opts.onViolation));
      });
      req.end(typeof init.body === 'string' ? init.body : undefined);
    });
  };
  return {
    fetch,
    close() {
      agents['http:'].destroy();
      agents['https:'].destroy();
    },
  };
}

function pinnedLookup(address: string, family: 4 | 6): LookupFunction {
  return (_hostname, options, callback) => {
    const cb = callback as (err: Error | null, address: unknown, family?: number) => void;
    if (typeof options === 'object' && options.all) cb(null, [{ address, family }]);
    else cb(null, address, family);
  };
}

function toResponse(res: IncomingMessage, cap: Cap, onViolation: (message: string) => void): Response {
  const headers = new Headers();
  for (const [name, value] of Object.entries(res.headers)) {
    for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, one);
  }
  const init = { status: res.statusCode!, statusText: res.statusMessage ?? '', headers };
  if (NULL_BODY.has(init.status)) {
    res.resume();
    return new Response(null, init);
  }
  return new Response(cappedBody(res, cap, onViolation), init);
}

/** The body as a web stream that fails past the cap; paused while the reader is behind. */
function cappedBody(res: IncomingMessage, cap: Cap, onViolation: (message: string) => void): ReadableStream<Uint8Array> {
  let size = 0;
  let finished = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      const finish = (err?: Error) => {
        if (finished) return;
        finished = true;
        if (err) controller.error(err);
        else controller.close();
      };
      res.on('data', (chunk: Buffer) => {
        if (finished) return;
        size += chunk.length;
        if (size > cap.bytes) {
          const message = `answered more than ${cap.bytes} bytes (${cap.setting})`;
          finish(new McpResponseTooLargeError(message));
          res.destroy();
          onViolation(message);
          return;
        }
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.length));
        if ((controller.desiredSize ?? 1) <= 0) res.pause();
      });
      res.once('end', () => finish());
      res.once('error', (err) => finish(err));
      res.once('close', () => finish(new Error('connection closed')));
    },
    pull() {
      res.resume();
    },
    cancel() {
      finished = true;
      res.destroy();
    },
  });
}

export class McpResponseTooLargeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'McpResponseTooLargeError';
  }
}
