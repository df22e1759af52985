import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { blockedAddressReason, isHostAllowlisted, metadataAddressReason } from '../../../src/capabilities/web-fetch/address-policy.js';

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

describe('isHostAllowlisted', () => {
  it('matches exact hosts case-insensitively and *.domain subdomains', () => {
    assert.equal(isHostAllowlisted('Example.COM', ['example.com']), true);
    assert.equal(isHostAllowlisted('example.com.', ['example.com']), true);
    assert.equal(isHostAllowlisted('api.example.com', ['example.com']), false);
    assert.equal(isHostAllowlisted('api.example.com', ['*.example.com']), true);
    assert.equal(isHostAllowlisted('example.com', ['*.example.com']), false);
    assert.equal(isHostAllowlisted('evilexample.com', ['*.example.com']), false);
    assert.equal(isHostAllowlisted('::1', ['[::1]']), true);
    assert.equal(isHostAllowlisted('127.0.0.1', []), false);
  });
});
