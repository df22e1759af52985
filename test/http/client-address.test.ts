import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createClientAddressResolver, parseTrustedProxies } from '../../src/http/client-address.js';

test('client address - without TRUST_PROXY the peer is the client and X-Forwarded-For is ignored', () => {
  const resolve = createClientAddressResolver('');
  assert.equal(resolve('10.0.0.5', '203.0.113.7'), '10.0.0.5');
  assert.equal(resolve('127.0.0.1', undefined), '127.0.0.1');
});

test('client address - a trusted peer: the right-most X-Forwarded-For entry is the client', () => {
  const resolve = createClientAddressResolver('10.0.0.5');
  assert.equal(resolve('10.0.0.5', '203.0.113.7'), '203.0.113.7');
  assert.equal(resolve('10.0.0.5', ' 203.0.113.7 '), '203.0.113.7');
  assert.equal(resolve('10.0.0.5', undefined), '10.0.0.5', 'no header: the proxy itself');
});

test('client address - spoofing: an untrusted peer cannot choose its address with X-Forwarded-For', () => {
  const resolve = createClientAddressResolver('10.0.0.0/8');
  assert.equal(resolve('198.51.100.9', '203.0.113.7'), '198.51.100.9');
  assert.equal(resolve('198.51.100.9', '10.0.0.1'), '198.51.100.9');
});

test('client address - spoofing: entries a client wrote left of the one the proxy appended are not used', () => {
  const resolve = createClientAddressResolver('10.0.0.5');
  // The client sent "X-Forwarded-For: 1.1.1.1, 2.2.2.2"; the proxy appended the address it saw.
  assert.equal(resolve('10.0.0.5', '1.1.1.1, 2.2.2.2, 203.0.113.7'), '203.0.113.7');
});

test('client address - multiple hops: trusted hops are skipped from the right', () => {
  const resolve = createClientAddressResolver('10.0.0.0/8, 192.168.1.1');
  // client → CDN edge (untrusted, but a real hop) → 192.168.1.1 → 10.1.2.3 → us
  assert.equal(resolve('10.1.2.3', '198.51.100.1, 203.0.113.7, 192.168.1.1'), '203.0.113.7');
  assert.equal(resolve('10.1.2.3', '203.0.113.7, 10.9.9.9, 192.168.1.1'), '203.0.113.7');
  assert.equal(resolve('10.1.2.3', '10.9.9.9, 192.168.1.1'), '10.9.9.9', 'every hop trusted: the left-most');
});

test('client address - an entry that is not an IP stops at the hop that passed it on', () => {
  const resolve = createClientAddressResolver('10.0.0.0/8');
  assert.equal(resolve('10.0.0.5', 'unknown'), '10.0.0.5');
  assert.equal(resolve('10.0.0.5', '203.0.113.7, garbage, 10.0.0.9'), '10.0.0.9');
  assert.equal(resolve('10.0.0.5', '203.0.113.7:4711'), '10.0.0.5');
});

test('client address - shorthands and IPv6, including IPv4-mapped peers', () => {
  const loopback = createClientAddressResolver('loopback');
  assert.equal(loopback('127.0.0.1', '203.0.113.7'), '203.0.113.7');
  assert.equal(loopback('::1', '2001:db8::7'), '2001:db8::7');
  assert.equal(loopback('::ffff:127.0.0.1', '203.0.113.7'), '203.0.113.7');
  assert.equal(loopback('0000:0000:0000:0000:0000:ffff:7f00:0001', '203.0.113.7'), '203.0.113.7', 'uWS prints IPv6 in full');
  assert.equal(loopback('10.0.0.5', '203.0.113.7'), '10.0.0.5');
  const priv = createClientAddressResolver('private');
  for (const peer of ['10.1.1.1', '172.16.0.1', '172.31.255.255', '192.168.0.10', 'fd12::1']) {
    assert.equal(priv(peer, '203.0.113.7'), '203.0.113.7', peer);
  }
  for (const peer of ['172.32.0.1', '8.8.8.8', '2001:db8::1', '127.0.0.1']) assert.equal(priv(peer, '203.0.113.7'), peer, peer);
  assert.equal(createClientAddressResolver('2001:db8::/32')('2001:db8::1', '198.51.100.2'), '198.51.100.2');
});

test('client address - TRUST_PROXY values that cannot be read are refused, naming the entry', () => {
  assert.equal(parseTrustedProxies(''), null);
  assert.equal(parseTrustedProxies(' , '), null);
  for (const bad of ['yes', '10.0.0.0/33', '10.0.0/8', '::1/129', '10.0.0.0/8/1', '10.0.0.0/', 'loopback,nginx']) {
    assert.throws(
      () => parseTrustedProxies(bad),
      (err: Error) => err instanceof RangeError && /not an IP, a CIDR/.test(err.message),
      bad,
    );
  }
  assert.throws(() => parseTrustedProxies('loopback,nginx'), /: nginx$/);
});
