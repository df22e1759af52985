/**
 * SSRF-safe fetching: every hop's host is resolved here, every resolved address checked
 * (loopback, private, link-local, metadata, CGNAT, multicast… are refused), and the connection
 * pinned to the checked address. Redirects are followed by hand, each hop checked again.
 */
import { lookup } from 'node:dns/promises';
import type { IncomingHttpHeaders } from 'node:http';
import { isIP } from 'node:net';
import { ToolError } from '../types.js';
import { blockedAddressReason, isHostRuleMatch, metadataAddressReason, type HostRule } from './address-policy.js';
import { requestPinned, type PinnedResponse } from './pinned-request.js';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to all its addresses. */
export type Resolver = (host: string) => Promise<ResolvedAddress[]>;

export interface SafeFetchOptions {
  method: 'GET' | 'HEAD';
  timeoutMs: number;
  maxBytes: number;
  maxRedirects: number;
  /**
   * The operator's hosts exempt from the private-address check (`WEB_FETCH_ALLOWED_PRIVATE_HOSTS`);
   * never a tenant's setting. Cloud metadata addresses stay refused.
   */
  allowPrivateHosts: readonly HostRule[];
  /** Cancellation by the caller (turn cancelled); its reason is rethrown as is. */
  signal: AbortSignal;
  userAgent: string;
  /**
   * Extra request headers (they win over the defaults). Sent to the first URL's origin only:
   * a redirect to another origin drops them, as browsers drop Authorization.
   */
  headers?: Readonly<Record<string, string>>;
  resolve?: Resolver;
}

export interface SafeFetchResult {
  /** The final URL after redirects. */
  url: string;
  status: number;
  statusText: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  truncated: boolean;
  redirects: string[];
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

export const systemResolver: Resolver = async (host) => {
  const answers = await lookup(host, { all: true, verbatim: true });
  return answers.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

/** Fetches `url` under the policy above. Expected failures are `ToolError`s. */
export async function safeFetch(url: string, opts: SafeFetchOptions): Promise<SafeFetchResult> {
  const timeout = AbortSignal.timeout(opts.timeoutMs);
  const signal = AbortSignal.any([opts.signal, timeout]);
  try {
    return await followRedirects(checkUrl(url), opts, signal);
  } catch (err) {
    if (opts.signal.aborted) throw opts.signal.reason;
    if (timeout.aborted) throw new ToolError(`The request timed out after ${opts.timeoutMs} ms.`, { cause: err });
    if (err instanceof ToolError) throw err;
    throw new ToolError(`The request failed: ${networkMessage(err)}`, { cause: err });
  }
}

async function followRedirects(start: URL, opts: SafeFetchOptions, signal: AbortSignal): Promise<SafeFetchResult> {
  const redirects: string[] = [];
  let current = start;
  let method = opts.method;
  let extraHeaders = opts.headers;
  for (;;) {
    const res = await requestHop(current, method, opts, signal, extraHeaders);
    const location = res.headers.location;
    if (!REDIRECT_STATUSES.has(res.status) || !location) {
      const { body, truncated } = method === 'HEAD' ? { body: Buffer.alloc(0), truncated: false } : await res.readBody(opts.maxBytes);
      return { url: current.href, status: res.status, statusText: res.statusText, headers: res.headers, body, truncated, redirects };
    }
    res.discard();
    if (redirects.length >= opts.maxRedirects) throw new ToolError(`Too many redirects (more than ${opts.maxRedirects}).`);
    current = checkUrl(new URL(location, current).href);
    if (current.origin !== start.origin) extraHeaders = undefined;
    if (res.status === 303) method = method === 'HEAD' ? 'HEAD' : 'GET';
    redirects.push(current.href);
  }
}

async function requestHop(
  url: URL,
  method: 'GET' | 'HEAD',
  opts: SafeFetchOptions,
  signal: AbortSignal,
  extraHeaders?: Readonly<Record<string, string>>,
): Promise<PinnedResponse> {
  const target = await resolveTarget(url, opts, signal);
  const headers = {
    'user-agent': opts.userAgent,
    accept: 'text/html,application/xhtml+xml,text/markdown,text/plain;q=0.9,application/json;q=0.9,*/*;q=0.5',
    'accept-encoding': 'gzip, deflate, br',
    ...extraHeaders,
  };
  return requestPinned({ url, method, address: target.address, family: target.family, headers, signal });
}

/** The address to connect to, after checking every address the host resolves to. */
async function resolveTarget(url: URL, opts: SafeFetchOptions, signal: AbortSignal): Promise<ResolvedAddress> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const literal = isIP(host);
  const addresses: ResolvedAddress[] = literal
    ? [{ address: host, family: literal === 6 ? 6 : 4 }]
    : await abortable((opts.resolve ?? systemResolver)(host), signal).catch((err: unknown) => {
        if (signal.aborted) throw err;
        throw new ToolError(`Could not resolve host "${host}".`, { cause: err });
      });
  if (addresses.length === 0) throw new ToolError(`Could not resolve host "${host}".`);
  const allowlisted = isHostRuleMatch(host, portOf(url), opts.allowPrivateHosts);
  for (const a of addresses) {
    const reason = allowlisted ? metadataAddressReason(a.address) : blockedAddressReason(a.address);
    if (reason) {
      throw new ToolError(
        `Refused to fetch ${url.origin}: ${host} resolves to ${a.address} (${reason}). Only public internet addresses can be fetched (an operator can allow private hosts with WEB_FETCH_ALLOWED_PRIVATE_HOSTS).`,
      );
    }
  }
  return addresses[0]!;
}

/** The URL's port, the scheme's default when none is written. */
export function portOf(url: URL): number {
  return url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
}

/** Parses and vets a URL: http(s) only, no embedded credentials. */
export function checkUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ToolError(`Invalid URL: ${text}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ToolError(`Only http and https URLs can be fetched, not ${url.protocol}`);
  if (url.username || url.password) throw new ToolError('URLs with embedded credentials are not supported.');
  if (!url.hostname) throw new ToolError(`Invalid URL: ${text}`);
  return url;
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function networkMessage(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  const message = err instanceof Error ? err.message : String(err);
  return typeof code === 'string' && !message.includes(code) ? `${code} ${message}` : message;
}
