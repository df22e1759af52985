import { BlockList, isIP } from 'node:net';

/** The client address of a request, from the socket peer and the `X-Forwarded-For` header. */
export type ClientAddressResolver = (peer: string, forwardedFor: string | undefined) => string;

/** What the TRUST_PROXY shorthands stand for. `private` is RFC 1918 plus IPv6 unique-local. */
export const TRUST_PROXY_SHORTHANDS: Readonly<Record<string, readonly string[]>> = {
  loopback: ['127.0.0.0/8', '::1/128'],
  private: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
};

/**
 * Parses a TRUST_PROXY value: comma-separated IPs, CIDRs (`10.0.0.0/8`, `fd00::/8`) and the
 * shorthands `loopback` and `private`. Returns null for an empty value (trust nobody);
 * throws RangeError naming the first entry it cannot read.
 */
export function parseTrustedProxies(spec: string): BlockList | null {
  const entries = spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (entries.length === 0) return null;
  const list = new BlockList();
  for (const entry of entries) {
    for (const item of TRUST_PROXY_SHORTHANDS[entry] ?? [entry]) addEntry(list, item, entry);
  }
  return list;
}

function addEntry(list: BlockList, item: string, entry: string): void {
  const [ip = '', bits, ...rest] = item.split('/');
  const family = isIP(ip);
  const max = family === 4 ? 32 : 128;
  const prefix = bits === undefined ? max : /^\d{1,3}$/.test(bits) ? Number(bits) : NaN;
  if (family === 0 || rest.length > 0 || !(prefix >= 0 && prefix <= max)) {
    throw new RangeError(`has an entry that is not an IP, a CIDR, 'loopback' or 'private': ${entry}`);
  }
  list.addSubnet(ip, prefix, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * A resolver for the given trusted proxies (a TRUST_PROXY value). With none, the client is
 * always the socket peer. Otherwise, when the peer is trusted, `X-Forwarded-For` is read from
 * the right: each trusted hop is skipped and the first untrusted address is the client, so
 * whatever a client wrote into the header itself (to the left) is never used. When every hop
 * is trusted, the left-most one is the client; an entry that is not an IP ends the walk at
 * the hop that passed it on.
 */
export function createClientAddressResolver(trustProxy: string): ClientAddressResolver {
  const trusted = parseTrustedProxies(trustProxy);
  if (!trusted) return (peer) => peer;
  const isTrusted = (addr: string): boolean => {
    const family = isIP(addr);
    return family !== 0 && trusted.check(addr, family === 4 ? 'ipv4' : 'ipv6');
  };
  return function clientAddress(peer, forwardedFor) {
    if (!forwardedFor || !isTrusted(peer)) return peer;
    const hops = forwardedFor.split(',').map((s) => s.trim());
    let client = peer;
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = hops[i]!;
      if (isIP(hop) === 0) return client;
      client = hop;
      if (!isTrusted(hop)) return hop;
    }
    return client;
  };
}
