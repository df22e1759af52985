/**
 * NATS_URL as NATS users write it: `nats://user:pass@host:4222`, `nats://token@host`,
 * `tls://host:4222`, `host:4222`, several comma-separated. nats.js connects to host:port only
 * (it drops the scheme and ignores credentials in a URL), so this module splits them out: the
 * servers without credentials, which may be logged and counted, and the credentials, which go
 * to the connect options and nowhere else. Pure (config.ts validates NATS_URL with it).
 */

/** Credentials carried in the URL: `user:pass@` or `token@`. */
export type NatsUrlCredentials = { kind: 'user'; user: string; pass: string } | { kind: 'token'; token: string };

export interface ParsedNatsUrl {
  /** `scheme://host:port` of each server, without credentials. */
  servers: string[];
  credentials?: NatsUrlCredentials;
  /** Some server was given as `tls://`: the connection requires TLS. */
  tls: boolean;
}

/** A NATS_URL problem; the message never repeats the URL (it may hold a password). */
export class NatsUrlError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NatsUrlError';
  }
}

const SCHEMES = new Set(['nats:', 'tls:']);

/** Splits NATS_URL into servers and credentials; throws NatsUrlError when it cannot be used. */
export function parseNatsUrl(value: string): ParsedNatsUrl {
  const entries = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (entries.length === 0) throw new NatsUrlError('names no server');
  const servers: string[] = [];
  let credentials: NatsUrlCredentials | undefined;
  let tls = false;
  entries.forEach((entry, i) => {
    const where = entries.length > 1 ? `server ${i + 1}` : 'the server';
    const url = parseEntry(entry, where);
    if (!SCHEMES.has(url.protocol)) throw new NatsUrlError(`${where} must be nats://, tls:// or host:port`);
    if (!url.hostname) throw new NatsUrlError(`${where} has no host`);
    if ((url.pathname && url.pathname !== '/') || url.search || url.hash)
      throw new NatsUrlError(`${where} has a path or query; give scheme://host:port`);
    tls ||= url.protocol === 'tls:';
    servers.push(`${url.protocol}//${url.host}`);
    const own = credentialsOf(url, /^(?:[a-z][a-z0-9+.-]*:\/\/)?[^@/]*:[^@/]*@/i.test(entry), where);
    if (!own) return;
    // One connection authenticates once, also to servers it learns from the cluster.
    if (credentials && !sameCredentials(credentials, own))
      throw new NatsUrlError(`${where} carries other credentials than an earlier one; use the same on every server`);
    credentials = own;
  });
  return { servers, credentials, tls };
}

function parseEntry(entry: string, where: string): URL {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(entry) ? entry : `nats://${entry}`;
  try {
    const url = new URL(withScheme);
    if (!url.port) url.port = '4222';
    return url;
  } catch {
    throw new NatsUrlError(`${where} is not a valid URL`);
  }
}

/** `withColon`: the userinfo had a colon (URL drops an empty password, so `user:@host` is told apart here). */
function credentialsOf(url: URL, withColon: boolean, where: string): NatsUrlCredentials | undefined {
  if (!url.username && !url.password) return undefined;
  const decode = (s: string) => {
    try {
      return decodeURIComponent(s);
    } catch {
      throw new NatsUrlError(`${where} has badly percent-encoded credentials`);
    }
  };
  if (!url.username) throw new NatsUrlError(`${where} has a password but no user`);
  // `user:@host` is a user with an empty password; `token@host` (no colon) is a token.
  return withColon
    ? { kind: 'user', user: decode(url.username), pass: decode(url.password) }
    : { kind: 'token', token: decode(url.username) };
}

function sameCredentials(a: NatsUrlCredentials, b: NatsUrlCredentials): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
