/** Which resolved addresses `web_fetch` (and LLM provider base URLs) may reach: public unicast only, unless the operator allowlisted the host. */
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
 * One entry of an operator's private-host allowlist (`WEB_FETCH_ALLOWED_PRIVATE_HOSTS`,
 * `LLM_PROVIDER_ALLOWED_PRIVATE_HOSTS`): a host name, an IP, `*.example.com` (subdomains; never
 * an IP literal) or `*` (every host), with an optional port (null = any port).
 */
export interface HostRule {
  host: string;
  port: number | null;
}

const HOST_NAME_RE = /^(\*\.)?[a-z0-9_-]+(\.[a-z0-9_-]+)*$/;

function canonicalHost(host: string): string {
  return host
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');
}

/** One entry: `host`, `host:port`, `[v6]`, `[v6]:port`, a bare IPv6, `*.domain[:port]` or `*`. */
function parseHostRule(entry: string): HostRule {
  const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry) ?? (isIP(entry) === 6 ? [entry, entry, undefined] : /^([^:]+)(?::(\d+))?$/.exec(entry));
  const host = m ? canonicalHost(m[1]!) : '';
  const port = m?.[2] === undefined ? null : Number(m[2]);
  const hostOk = host === '*' || isIP(host) !== 0 || HOST_NAME_RE.test(host);
  if (!hostOk || (port !== null && (port < 1 || port > 65535)))
    throw new TypeError(`invalid host entry ${JSON.stringify(entry)} (expected host, host:port, *.domain or *)`);
  return { host, port };
}

/** Parses a comma-separated allowlist (empty → none); throws TypeError naming a malformed entry. */
export function parseHostAllowlist(text: string): HostRule[] {
  return text
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)
    .map(parseHostRule);
}

/**
 * True when `host` (and `port`) is on an operator allowlist. `*.example.com` matches
 * subdomains of example.com but never an IP literal, so no pattern lets an address through
 * that the operator did not write out; `*` is the operator's explicit "every host".
 */
export function isHostRuleMatch(host: string, port: number | null, rules: readonly HostRule[]): boolean {
  const h = canonicalHost(host);
  const literal = isIP(h) !== 0;
  return rules.some((rule) => {
    if (rule.port !== null && rule.port !== port) return false;
    if (rule.host === '*') return true;
    if (rule.host.startsWith('*.')) return !literal && h.endsWith(rule.host.slice(1));
    return h === rule.host;
  });
}
