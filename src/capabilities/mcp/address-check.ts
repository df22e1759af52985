/**
 * The address policy of MCP server URLs: web_fetch's (loopback, private, link-local, CGNAT,
 * multicast and cloud metadata addresses refused), with its own operator allowlist
 * (MCP_ALLOWED_PRIVATE_HOSTS) that still never reaches metadata. A tenant setting never lifts it.
 * Checked twice: on write from the URL alone (an IP literal or `localhost` gives a 422 at once),
 * and on every connection after DNS (a name that resolves to a private address fails the call).
 */
import { isIP } from 'node:net';
import { blockedAddressReason, isHostRuleMatch, metadataAddressReason, type HostRule } from '../web-fetch/address-policy.js';
import { portOf, type ResolvedAddress, type Resolver } from '../web-fetch/safe-fetch.js';

export const PRIVATE_HOSTS_SETTING = 'MCP_ALLOWED_PRIVATE_HOSTS';

/** An MCP server address the policy refuses, or one that cannot be resolved; its message is safe to show. */
export class McpAddressError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'McpAddressError';
  }
}

/** Why `url` may not be used as an MCP server, judged without DNS; null when it may. */
export function urlProblem(text: string, rules: readonly HostRule[]): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'is not a valid URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http or https URL';
  if (url.username || url.password) return 'must not embed credentials (use headers)';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const loopbackName = host === 'localhost' || host.endsWith('.localhost');
  const address = loopbackName ? '127.0.0.1' : isIP(host) ? host : null;
  if (address === null) return null;
  const reason = isHostRuleMatch(host, portOf(url), rules) ? metadataAddressReason(address) : blockedAddressReason(address);
  return reason ? refusal(host, address, reason) : null;
}

/** The address to connect to, after checking every address the URL's host resolves to. */
export async function checkedAddress(url: URL, rules: readonly HostRule[], resolve: Resolver): Promise<ResolvedAddress> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const literal = isIP(host);
  const addresses: ResolvedAddress[] = literal
    ? [{ address: host, family: literal === 6 ? 6 : 4 }]
    : await resolve(host).catch(() => {
        throw new McpAddressError(`could not resolve host "${host}"`);
      });
  if (addresses.length === 0) throw new McpAddressError(`could not resolve host "${host}"`);
  const allowlisted = isHostRuleMatch(host, portOf(url), rules);
  for (const a of addresses) {
    const reason = allowlisted ? metadataAddressReason(a.address) : blockedAddressReason(a.address);
    if (reason) throw new McpAddressError(refusal(host, a.address, reason));
  }
  return addresses[0]!;
}

function refusal(host: string, address: string, reason: string): string {
  const what = host === address ? address : `${host} (${address})`;
  return `points to ${what}, a ${reason} address: only public internet addresses can be used (an operator can allow private hosts with ${PRIVATE_HOSTS_SETTING})`;
}
