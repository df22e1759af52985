import { Readable } from 'node:stream';
import { request } from 'undici';

/**
 * The `fetch` the vendor SDKs are given (their documented `fetch` option): the SDK still builds
 * and sends every request (auth, headers, timeouts, abort, its error classes for non-2xx answers,
 * its connection errors), and this carries it with undici's `request` instead of the global
 * `fetch`. Both are undici on a kept-alive pool; `fetch` adds the WHATWG layers (a Request,
 * Headers and a web stream per body, a promise per streamed chunk through the stream's reader),
 * a seventh of the service's CPU per conversation on the real path (decision 0113).
 *
 * A successful event stream's body stays undici's Node stream, which `responseBody` gives to the
 * caller that reads it (vendor-sse). Any other answer (JSON, the vendor's errors) is read whole
 * into a standard Response, so the SDK parses and classifies it exactly as from `fetch`.
 */
export async function vendorFetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  const url = typeof input === 'string' || input instanceof URL ? input : input.url;
  const answer = await request(url, {
    method: (init.method ?? 'GET') as 'GET',
    headers: requestHeaders(init.headers),
    // undici writes an iterable's chunks as they come (its request.js); its typings list only single-chunk bodies.
    body: requestBody(init.body) as string | Uint8Array | undefined,
    signal: init.signal ?? undefined,
  });
  const headers = responseHeaders(answer.headers);
  const ok = answer.statusCode >= 200 && answer.statusCode <= 299 && answer.statusCode !== 204;
  if (!ok || !headers.get('content-type')?.startsWith('text/event-stream')) {
    const text = await answer.body.text();
    return new Response(NULL_BODY_STATUSES.has(answer.statusCode) ? null : text, { status: answer.statusCode, headers });
  }
  return streamedResponse(answer.statusCode, headers, answer.body);
}

/** Statuses a Response may not be given a body for, not even an empty one. */
const NULL_BODY_STATUSES = new Set([204, 205, 304]);

/**
 * A Response for an event stream whose chunks stay in `body`: `responseBody` hands them over; a
 * reader of the standard `response.body` (an SDK's own stream helpers) gets them as a web stream.
 */
function streamedResponse(status: number, headers: Headers, body: Readable): Response {
  const response = new Response(null, { status, headers });
  nodeBodies.set(response, body);
  let web: ReadableStream<Uint8Array> | undefined;
  Object.defineProperty(response, 'body', {
    get: () => {
      nodeBodies.delete(response);
      web ??= Readable.toWeb(body) as ReadableStream<Uint8Array>;
      return web;
    },
  });
  return response;
}

const nodeBodies = new WeakMap<Response, Readable>();

/** A response's body as chunks: undici's Node stream when vendorFetch fetched it, else the web stream. */
export function responseBody(response: Response): Readable | ReadableStream<Uint8Array> | null {
  return nodeBodies.get(response) ?? response.body;
}

/**
 * A request body made of `parts`, in order, with no copy: as a web stream for any `fetch`, and
 * handed to vendorFetch as the parts themselves (undici writes an iterable's chunks as they are).
 */
export function partsBody(parts: readonly Uint8Array[]): ReadableStream<Uint8Array> {
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const part of parts) controller.enqueue(part);
      controller.close();
    },
  });
  bodyParts.set(stream, parts);
  return stream;
}

const bodyParts = new WeakMap<object, readonly Uint8Array[]>();

function requestBody(body: RequestInit['body']): string | Uint8Array | Iterable<Uint8Array> | AsyncIterable<Uint8Array> | undefined {
  if (body === null || body === undefined) return undefined;
  if (typeof body === 'string' || body instanceof Uint8Array) return body;
  const parts = bodyParts.get(body as object);
  if (parts) return parts;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  if (ArrayBuffer.isView(body)) return new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
  if (body instanceof ReadableStream) return body as AsyncIterable<Uint8Array>;
  // FormData, Blob, URLSearchParams: only the SDKs' uploads send them, which the service does not use.
  throw new TypeError('vendorFetch: unsupported request body');
}

/** The SDKs pass a Headers, which undici reads as pairs; anything else is read as `fetch` would. */
function requestHeaders(headers: RequestInit['headers']): Headers | null {
  if (!headers) return null;
  return headers instanceof Headers ? headers : new Headers(headers);
}

function responseHeaders(raw: Record<string, string | string[] | undefined>): Headers {
  const headers = new Headers();
  for (const name in raw) {
    const value = raw[name];
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else if (value !== undefined) headers.append(name, value);
  }
  return headers;
}
