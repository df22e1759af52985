/**
 * Caller-supplied `fetch_url` headers. A value may name session secrets as `{{secret:NAME}}`;
 * they are resolved here, at call time, so the secret is sent to the server without ever being
 * in the tool's arguments, its result or the transcript, and only to a host the secret allows.
 */
import { hostAllowed } from '../secret-hosts.js';
import type { SecretForUse } from '../storage-ports.js';
import { ToolError } from '../types.js';

export const MAX_FETCH_HEADERS = 20;
export const MAX_FETCH_HEADER_VALUE_CHARS = 8192;

/** RFC 9110 token characters. */
const HEADER_NAME_RE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/;
/** `{{secret:NAME}}`, NAME as secret names are spelled (session-storage.ts). */
const PLACEHOLDER_RE = /\{\{secret:([A-Za-z_][A-Za-z0-9_.:-]{0,127})\}\}/g;
/** Headers that frame the connection or the body, or that the fetcher owns (it decodes the body itself). */
const RESERVED = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'proxy-authorization',
  'proxy-connection',
  'accept-encoding',
]);

/** Looks a secret up by name; null when the session has no such secret (or may not use it). */
export type SecretLookup = (name: string) => Promise<SecretForUse | null>;

/**
 * Validated headers, names in lower case, placeholders replaced by the secrets' values. `hostname`
 * is the host the request goes to (a WHATWG URL's); a secret that does not allow it is a ToolError.
 */
export async function resolveRequestHeaders(
  headers: Readonly<Record<string, string>>,
  lookup: SecretLookup,
  hostname: string,
): Promise<Record<string, string>> {
  const entries = Object.entries(headers);
  if (entries.length > MAX_FETCH_HEADERS) throw new ToolError(`At most ${MAX_FETCH_HEADERS} headers can be sent.`);
  const out: Record<string, string> = {};
  for (const [rawName, template] of entries) {
    const name = rawName.toLowerCase();
    if (!HEADER_NAME_RE.test(rawName)) throw new ToolError(`Invalid header name: ${JSON.stringify(rawName.slice(0, 128))}`);
    if (RESERVED.has(name) || name.startsWith('proxy-')) throw new ToolError(`The header "${name}" cannot be set.`);
    if (/[\u0000-\u0008\u000a-\u001f\u007f]/.test(template)) throw new ToolError(`The header "${name}" contains control characters.`);
    out[name] = await fillPlaceholders(name, template, lookup, hostname);
  }
  return out;
}

async function fillPlaceholders(header: string, template: string, lookup: SecretLookup, hostname: string): Promise<string> {
  const names = [...new Set([...template.matchAll(PLACEHOLDER_RE)].map((m) => m[1]!))];
  const values = new Map<string, string>();
  for (const name of names) {
    const secret = await lookup(name);
    if (secret === null)
      throw new ToolError(`The header "${header}" names the secret "${name}", which this session does not have or cannot use here.`);
    if (!hostAllowed(hostname, secret.allowed_hosts)) throw new ToolError(notAllowedMessage(name, hostname, secret.allowed_hosts));
    const { value } = secret;
    // A value that would break the header line is never sent (and never echoed).
    if (/[\r\n\u0000]/.test(value)) throw new ToolError(`The secret "${name}" cannot be sent in a header (it contains line breaks).`);
    values.set(name, value);
  }
  return template.replace(PLACEHOLDER_RE, (_m, name: string) => values.get(name)!);
}

/** Names the host and the secret, never the value. */
function notAllowedMessage(name: string, hostname: string, allowed: readonly string[]): string {
  const where =
    allowed.length === 0 ? 'it has no allowed hosts yet' : `it may be sent only to ${allowed.map((h) => JSON.stringify(h)).join(', ')}`;
  return `The secret "${name}" cannot be sent to ${hostname}: ${where}. The user can set its allowed_hosts (PUT /v1/sessions/{id}/storage/secrets).`;
}
