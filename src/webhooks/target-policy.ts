/**
 * Where a webhook may be sent: the `web_fetch` address policy (public unicast only; private,
 * loopback and link-local hosts only when the operator lists them in
 * WEBHOOK_ALLOWED_PRIVATE_HOSTS; cloud metadata never). Checked when an endpoint's URL is
 * written (400) and again before every attempt, whose connection is pinned to the checked
 * address, so a name re-pointed at a private address later is refused then.
 */
import { isIP } from 'node:net';
import { blockedAddressReason, isHostRuleMatch, metadataAddressReason, type HostRule } from '../capabilities/index.js';
import { portOf, systemResolver, type ResolvedAddress, type Resolver } from '../capabilities/index.js';

export type TargetCheck = { ok: true; target: ResolvedAddress } | { ok: false; reason: string };

export interface TargetPolicy {
  allowPrivateHosts: readonly HostRule[];
  resolve?: Resolver;
}

/** Why the URL text cannot name a webhook endpoint, or null: http(s), a host, no credentials, no fragment. */
export function urlProblem(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'url is not a valid URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'url must be http or https';
  if (url.username || url.password) return 'url must not carry credentials';
  if (!url.hostname) return 'url has no host';
  return null;
}

/** Resolves the URL's host and checks every address under the policy; the first address is the one to connect to. */
export async function checkTarget(url: URL, policy: TargetPolicy): Promise<TargetCheck> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const literal = isIP(host);
  let addresses: ResolvedAddress[];
  try {
    addresses = literal ? [{ address: host, family: literal === 6 ? 6 : 4 }] : await (policy.resolve ?? systemResolver)(host);
  } catch {
    addresses = [];
  }
  if (addresses.length === 0) return { ok: false, reason: `host "${host}" cannot be resolved` };
  const allowlisted = isHostRuleMatch(host, portOf(url), policy.allowPrivateHosts);
  for (const a of addresses) {
    const reason = allowlisted ? metadataAddressReason(a.address) : blockedAddressReason(a.address);
    if (reason)
      return {
        ok: false,
        reason: `host "${host}" resolves to a ${reason} address; private hosts need the operator setting WEBHOOK_ALLOWED_PRIVATE_HOSTS`,
      };
  }
  return { ok: true, target: addresses[0]! };
}
