import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hostAllowed, normalizeSecretHosts } from '../../src/capabilities/secret-hosts.js';

describe('secret host patterns', () => {
  it('an exact host matches itself only; a wildcard matches subdomains at any depth, never the apex or a look-alike', () => {
    const hosts = ['api.example.com', '*.example.org', '127.0.0.1', '[::1]'];
    for (const ok of ['api.example.com', 'API.EXAMPLE.COM', 'api.example.com.', 'a.example.org', 'a.b.example.org', '127.0.0.1', '[::1]']) {
      assert.ok(hostAllowed(ok, hosts), ok);
    }
    for (const no of [
      'example.com',
      'x.api.example.com',
      'example.org',
      'evilexample.org',
      'example.org.evil.test',
      '127.0.0.2',
      'localhost',
      '',
    ]) {
      assert.ok(!hostAllowed(no, hosts), no);
    }
    assert.ok(!hostAllowed('api.example.com', []), 'no hosts: nowhere');
  });

  it('patterns are lower-cased and de-duplicated; URLs, bare wildcards and bad labels are refused', () => {
    assert.deepEqual(normalizeSecretHosts(['API.example.com', 'api.example.com', '*.X.org']), ['api.example.com', '*.x.org']);
    for (const bad of ['https://a.com', '*', '*.', 'a..b', '-a.com', 'a.com/x', 'a b', 'a.*.com', 'user@a.com', 'a.com:443']) {
      assert.equal(normalizeSecretHosts([bad]), null, bad);
    }
  });
});
