import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  blockedAddressReason,
  isHostRuleMatch,
  metadataAddressReason,
  parseHostAllowlist,
} from '../../../src/capabilities/web-fetch/address-policy.js';

describe('blockedAddressReason', () => {
  it('refuses loopback, private, link-local, metadata, CGNAT, unspecified, multicast and reserved IPv4', () => {
    const cases: Array<[string, RegExp]> = [
      ['127.0.0.1', /loopback/],
      ['127.255.0.9', /loopback/],
      ['10.1.2.3', /private/],
      ['172.16.0.1', /private/],
      ['172.31.255.255', /private/],
      ['192.168.1.1', /private/],
      ['169.254.169.254', /metadata/],
      ['169.254.1.1', /link-local/],
      ['100.64.0.1', /carrier-grade NAT/],
      ['0.0.0.0', /unspecified/],
      ['224.0.0.1', /multicast/],
      ['239.255.255.250', /multicast/],
      ['255.255.255.255', /broadcast/],
      ['198.18.0.1', /benchmarking/],
    ];
    for (const [ip, reason] of cases) assert.match(blockedAddressReason(ip) ?? 'ALLOWED', reason, ip);
  });

  it('refuses the IPv6 equivalents, including IPv4 embedded in IPv6', () => {
    const cases: Array<[string, RegExp]> = [
      ['::1', /loopback/],
      ['::', /unspecified/],
      ['[::1]', /loopback/],
      ['fe80::1', /link-local/],
      ['fe80::1%eth0', /link-local/],
      ['fc00::1', /unique local/],
      ['fd12:3456::1', /unique local/],
      ['ff02::1', /multicast/],
      ['::ffff:127.0.0.1', /loopback/],
      ['::ffff:7f00:1', /loopback/],
      ['::ffff:a9fe:a9fe', /metadata/],
      ['64:ff9b::a00:1', /private/],
      ['2001:db8::1', /documentation/],
    ];
    for (const [ip, reason] of cases) assert.match(blockedAddressReason(ip) ?? 'ALLOWED', reason, ip);
  });

  it('allows public unicast addresses', () => {
    for (const ip of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808']) {
      assert.equal(blockedAddressReason(ip), null, ip);
    }
  });

  it('refuses anything that is not an IP', () => {
    assert.equal(blockedAddressReason('example.com'), 'not an IP address');
  });
});

describe('metadataAddressReason', () => {
  it('flags cloud metadata endpoints only', () => {
    assert.equal(metadataAddressReason('169.254.169.254'), 'cloud metadata');
    assert.equal(metadataAddressReason('::ffff:169.254.169.254'), 'cloud metadata');
    assert.equal(metadataAddressReason('fd00:ec2::254'), 'cloud metadata');
    assert.equal(metadataAddressReason('100.100.100.200'), 'cloud metadata');
    assert.equal(metadataAddressReason('127.0.0.1'), null);
  });
});

describe('operator host allowlists (parseHostAllowlist, isHostRuleMatch)', () => {
  const allowed = (host: string, port: number | null, list: string) => isHostRuleMatch(host, port, parseHostAllowlist(list));

  it('matches exact hosts case-insensitively and *.domain subdomains', () => {
    assert.equal(allowed('Example.COM', 80, 'example.com'), true);
    assert.equal(allowed('example.com.', 80, 'example.com'), true);
    assert.equal(allowed('api.example.com', 80, 'example.com'), false);
    assert.equal(allowed('api.example.com', 80, '*.example.com'), true);
    assert.equal(allowed('example.com', 80, '*.example.com'), false);
    assert.equal(allowed('evilexample.com', 80, '*.example.com'), false);
    assert.equal(allowed('::1', 80, '[::1]'), true);
    assert.equal(allowed('::1', 80, '::1'), true);
    assert.equal(allowed('127.0.0.1', 80, ''), false);
  });

  it('wildcard patterns never match IP literals; `*` is every host', () => {
    assert.equal(allowed('127.0.0.1', 80, '*.0.0.1'), false);
    assert.equal(allowed('10.0.0.1', 80, '*.0.1'), false);
    assert.equal(allowed('127.0.0.1', 80, '127.0.0.1'), true);
    assert.equal(allowed('127.0.0.1', 80, '*'), true);
    assert.equal(allowed('anything.test', 8080, '*'), true);
  });

  it('host:port entries match that port only; several entries are comma-separated', () => {
    const list = ' 127.0.0.1:8080 , llm.internal , [::1]:9000 ';
    assert.deepEqual(parseHostAllowlist(list), [
      { host: '127.0.0.1', port: 8080 },
      { host: 'llm.internal', port: null },
      { host: '::1', port: 9000 },
    ]);
    assert.equal(allowed('127.0.0.1', 8080, list), true);
    assert.equal(allowed('127.0.0.1', 8081, list), false);
    assert.equal(allowed('llm.internal', 443, list), true);
    assert.equal(allowed('::1', 9000, list), true);
    assert.equal(allowed('::1', 80, list), false);
  });

  it('refuses malformed entries', () => {
    for (const bad of ['http://x', 'a b', 'host:0', 'host:70000', '*foo', 'x.*', '[::1', 'a/b']) {
      assert.throws(() => parseHostAllowlist(bad), TypeError, bad);
    }
  });
});
