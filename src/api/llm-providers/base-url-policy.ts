import { isIP } from 'node:net';
import {
  blockedAddressReason,
  isHostRuleMatch,
  metadataAddressReason,
  portOf,
  systemResolver,
  type HostRule,
  type ResolvedAddress,
  type Resolver,
} from '../../capabilities/index.js';
import { InvalidRequestError } from '../../errors.js';

export interface BaseUrlPolicyOptions {
  /** The operator's `LLM_PROVIDER_ALLOWED_PRIVATE_HOSTS` (default none). */
  allowPrivateHosts: readonly HostRule[];
  /** DNS resolution (default: the system resolver). */
  resolve: Resolver;
}

/**
 * Where a provider `base_url` set through the API may point: the host is resolved and every
 * address must be public unicast (the `web_fetch` address policy), unless the operator
 * allowlisted the host; cloud metadata addresses are refused even then. Checked when the URL
 * is written; the SDK connects later on its own, so a name re-pointed to a private address
 * afterwards is not caught here (docs/decisions/0020-provider-keys-sealed-and-bound.md).
 */
export function createBaseUrlPolicy({ allowPrivateHosts = [], resolve = systemResolver }: Partial<BaseUrlPolicyOptions> = {}) {
  return async function assertBaseUrlAllowed(baseUrl: string | null): Promise<void> {
    if (baseUrl === null) return;
    let url: URL;
    try {
      url = new URL(baseUrl);
    } catch {
      throw new InvalidRequestError('Invalid request: base_url is not a valid URL');
    }
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const literal = isIP(host);
    let addresses: ResolvedAddress[];
    try {
      addresses = literal ? [{ address: host, family: literal === 6 ? 6 : 4 }] : await resolve(host);
    } catch {
      addresses = [];
    }
    if (addresses.length === 0) throw new InvalidRequestError(`Invalid request: base_url host "${host}" cannot be resolved`);
    const allowlisted = isHostRuleMatch(host, portOf(url), allowPrivateHosts);
    for (const a of addresses) {
      const reason = allowlisted ? metadataAddressReason(a.address) : blockedAddressReason(a.address);
      if (reason) {
        throw new InvalidRequestError(
          `Invalid request: base_url host "${host}" resolves to a ${reason} address; private hosts need the operator setting LLM_PROVIDER_ALLOWED_PRIVATE_HOSTS`,
        );
      }
    }
  };
}

export type AssertBaseUrlAllowed = ReturnType<typeof createBaseUrlPolicy>;
