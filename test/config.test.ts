import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../src/config.js';

test('config - NATS_REPLICAS defaults to auto and accepts 1-5', () => {
  assert.equal(loadConfig({}).NATS_REPLICAS, 'auto');
  assert.equal(loadConfig({ NATS_REPLICAS: 'auto' }).NATS_REPLICAS, 'auto');
  assert.equal(loadConfig({ NATS_REPLICAS: '3' }).NATS_REPLICAS, '3');
  assert.equal(loadConfig({ NATS_REPLICAS: '' }).NATS_REPLICAS, 'auto', 'empty counts as unset');
});

test('config - NATS_REPLICAS outside 1-5 fails with one line naming it', () => {
  for (const bad of ['0', '6', '2.5', 'three', '-1']) {
    assert.throws(
      () => loadConfig({ NATS_REPLICAS: bad }),
      (err: Error) =>
        err instanceof ConfigError && /^invalid configuration: NATS_REPLICAS /.test(err.message) && !err.message.includes('\n'),
      bad,
    );
  }
});

test('config - TRUST_PROXY defaults to off and takes IPs, CIDRs and shorthands', () => {
  assert.equal(loadConfig({}).TRUST_PROXY, '');
  assert.equal(
    loadConfig({ TRUST_PROXY: 'loopback, private, 203.0.113.9, 2001:db8::/32' }).TRUST_PROXY,
    'loopback, private, 203.0.113.9, 2001:db8::/32',
  );
});

test('config - TRUST_PROXY with an unreadable entry fails with one line naming the entry', () => {
  assert.throws(
    () => loadConfig({ TRUST_PROXY: 'loopback,10.0.0.0/40' }),
    (err: Error) =>
      err instanceof ConfigError &&
      err.message === "invalid configuration: TRUST_PROXY has an entry that is not an IP, a CIDR, 'loopback' or 'private': 10.0.0.0/40",
  );
});

test('config - LLMSIM_ENABLED defaults to on only in embedded mode without a vendor key; set, it wins', () => {
  assert.equal(loadConfig({}).LLMSIM_ENABLED, true);
  assert.equal(loadConfig({ OPENAI_API_KEY: 'sk-x' }).LLMSIM_ENABLED, false);
  assert.equal(loadConfig({ DATABASE_URL: 'postgres://h/db' }).LLMSIM_ENABLED, false);
  assert.equal(loadConfig({ DATABASE_URL: 'postgres://h/db', LLMSIM_ENABLED: 'true' }).LLMSIM_ENABLED, true);
  assert.equal(loadConfig({ LLMSIM_ENABLED: 'false' }).LLMSIM_ENABLED, false);
  assert.equal(loadConfig({}).LLMSIM_MAX_TOKENS, 10_000);
  assert.equal(loadConfig({}).LLMSIM_MAX_WAIT_MS, 60_000);
  assert.equal(loadConfig({}).EVENTS_LIST_MAX_BYTES, 4 * 1024 * 1024);
});
