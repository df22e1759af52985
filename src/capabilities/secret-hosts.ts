/**
 * The hosts a session secret may be sent to. A secret used by reference (`{{secret:NAME}}` in a
 * `fetch_url` header) goes only to a host its `allowed_hosts` names, so a model steered by fetched
 * text cannot send it elsewhere. A pattern is a host name (`api.example.com`), a wildcard over the
 * subdomains of one (`*.example.org`: `a.example.org`, `a.b.example.org`, not `example.org`), an IPv4
 * address or a bracketed IPv6 address. Binding a secret never lifts the fetcher's address checks.
 */

/** Patterns one secret may list. */
export const MAX_SECRET_HOSTS = 32;

const LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
/** A pattern as stored (lower case); the REST schema and the `secret_store` tool check it. */
export const SECRET_HOST_PATTERN = `^(?:(?:\\*\\.)?${LABEL}(?:\\.${LABEL})*|\\[[0-9a-f:.]{2,45}\\])$`;
const PATTERN_RE = new RegExp(SECRET_HOST_PATTERN);

/** Patterns lower-cased and de-duplicated; null when one is not a valid pattern. */
export function normalizeSecretHosts(patterns: readonly string[]): string[] | null {
  const out = [...new Set(patterns.map((p) => p.trim().toLowerCase()))];
  return out.length <= MAX_SECRET_HOSTS && out.every((p) => p.length <= 255 && PATTERN_RE.test(p)) ? out : null;
}

/** True when `hostname` (a WHATWG URL's `hostname`: lower case, IPv6 in brackets) matches a pattern. */
export function hostAllowed(hostname: string, patterns: readonly string[]): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  return patterns.some((p) => (p.startsWith('*.') ? host.endsWith(p.slice(1)) && host.length > p.length - 1 : host === p));
}
