/** Which resolved addresses `web_fetch` may connect to: public unicast only, unless a host is allowlisted. */
import { BlockList, isIP } from 'node:net';

const BLOCKED_V4: Array<[string, number, string]> = [
  ['0.0.0.0', 8, 'unspecified'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'carrier-grade NAT'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local / cloud metadata'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'IETF protocol assignments'],
  ['192.0.2.0', 24, 'documentation'],
  ['192.88.99.0', 24, '6to4 relay'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['198.51.100.0', 24, 'documentation'],
  ['203.0.113.0', 24, 'documentation'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved / broadcast'],
];

const BLOCKED_V6: Array<[string, number, string]> = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['::', 96, 'IPv4-compatible'],
  ['100::', 64, 'discard-only'],
  ['2001::', 23, 'IETF protocol assignments'],
  ['2001:db8::', 32, 'documentation'],
  ['2002::', 16, '6to4'],
  ['fc00::', 7, 'unique local (private)'],
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'site-local'],
  ['ff00::', 8, 'multicast'],
];

/** IPv6 prefixes that embed an IPv4 address in their last 32 bits; the IPv4 rules apply to it. */
const EMBEDDING_V4: Array<[string, number]> = [
  ['::ffff:0:0', 96],
  ['64:ff9b::', 96],
];

function buildList(rules: Array<[string, number, string]>, family: 'ipv4' | 'ipv6'): Array<[BlockList, string]> {
  return rules.map(([net, prefix, why]) => {
    const list = new BlockList();
    list.addSubnet(net, prefix, family);
    return [list, why];
  });
}

const v4Rules = buildList(BLOCKED_V4, 'ipv4');
const v6Rules = buildList(BLOCKED_V6, 'ipv6');
const embedding = EMBEDDING_V4.map(([net, prefix]) => {
  const list = new BlockList();
  list.addSubnet(net, prefix, 'ipv6');
  return list;
});

/** Why the address must not be contacted (e.g. `loopback`), or null when it is public. Non-IPs are refused. */
export function blockedAddressReason(address: string): string | null {
  const ip = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(ip);
  if (family === 4) return v4Rules.find(([list]) => list.check(ip, 'ipv4'))?.[1] ?? null;
  if (family !== 6) return 'not an IP address';
  if (embedding.some((list) => list.check(ip, 'ipv6'))) return blockedAddressReason(embeddedV4(ip));
  return v6Rules.find(([list]) => list.check(ip, 'ipv6'))?.[1] ?? null;
}

/** The IPv4 address in the last 32 bits of an IPv6 address. */
function embeddedV4(ip: string): string {
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(ip);
  if (dotted) return dotted[1]!;
  const groups = ip.split(':');
  const lo = parseInt(groups.at(-1) || '0', 16);
  const hi = parseInt(groups.at(-2) || '0', 16);
  return [hi >> 8, hi & 255, lo >> 8, lo & 255].join('.');
}

/** Cloud metadata endpoints: refused even for allowlisted hosts (they hand out credentials). */
const metadata = new BlockList();
for (const ip of ['169.254.169.254', '169.254.170.2', '100.100.100.200']) metadata.addAddress(ip, 'ipv4');
metadata.addAddress('fd00:ec2::254', 'ipv6');

/** `cloud metadata` when the address is a metadata endpoint (also IPv4-mapped), else null. */
export function metadataAddressReason(address: string): string | null {
  const ip = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(ip);
  if (family === 6 && embedding.some((list) => list.check(ip, 'ipv6'))) return metadataAddressReason(embeddedV4(ip));
  if (family === 0) return null;
  return metadata.check(ip, family === 4 ? 'ipv4' : 'ipv6') ? 'cloud metadata' : null;
}

/**
 * True when `host` is on the allowlist: an exact host name or IP (case-insensitive), or a
 * `*.example.com` pattern matching any subdomain of example.com.
 */
export function isHostAllowlisted(host: string, allowHosts: readonly string[]): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '');
  return allowHosts.some((entry) => {
    const e = entry.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '');
    if (e.startsWith('*.')) return h.endsWith(e.slice(1));
    return h === e;
  });
}
