import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createPrincipalCache } from '../../src/auth/principal-cache.js';
import type { Principal } from '../../src/auth/index.js';

const alice: Principal = { org_id: 'o1', user_id: 'u1', role: 'admin', operator: false, via: 'api_key', key_id: 'k1' };
const bob: Principal = { org_id: 'o1', user_id: 'u2', role: 'member', operator: false, via: 'api_key', key_id: 'k2' };

function clock() {
  let t = 1000;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

test('principal cache', async (t) => {
  await t.test('a check is reused until ttl after its read began, then dropped', () => {
    const c = clock();
    const cache = createPrincipalCache({ ttlMs: 500, maxEntries: 10, shared: true, monotonicNow: c.now });
    const key = cache.keyOf('ask_secret');
    const started = cache.readStarts();
    c.advance(100); // the database read took 100 ms
    cache.set(key, { principal: alice, validUntil: null }, started);
    assert.equal(cache.get(key), alice);
    c.advance(399);
    assert.equal(cache.get(key), alice, 'still inside the window counted from the read start');
    c.advance(1);
    assert.equal(cache.get(key), undefined, 'ttl counts from before the read, not from set()');
    assert.equal(cache.size(), 0);
  });

  await t.test('a check whose read outlasted the ttl is not cached at all', () => {
    const c = clock();
    const cache = createPrincipalCache({ ttlMs: 50, maxEntries: 10, shared: true, monotonicNow: c.now });
    const started = cache.readStarts();
    c.advance(60);
    cache.set(cache.keyOf('x'), { principal: alice, validUntil: null }, started);
    assert.equal(cache.size(), 0);
  });

  await t.test("a credential's own end (key expiry, token exp) cuts the window short", () => {
    const cache = createPrincipalCache({ ttlMs: 60_000, maxEntries: 10, shared: true });
    const expiring = cache.keyOf('expiring');
    const expired = cache.keyOf('expired');
    cache.set(expiring, { principal: alice, validUntil: Date.now() + 60_000 }, cache.readStarts());
    cache.set(expired, { principal: bob, validUntil: Date.now() - 1 }, cache.readStarts());
    assert.equal(cache.get(expiring), alice);
    assert.equal(cache.get(expired), undefined);
  });

  await t.test('keys are SHA-256 digests, never the credential', () => {
    const cache = createPrincipalCache({ ttlMs: 1000, maxEntries: 10, shared: false });
    const key = cache.keyOf('ask_plain_value');
    assert.ok(!key.includes('plain'));
    assert.equal(Buffer.from(key, 'base64').length, 32);
    assert.equal(cache.keyOf('ask_plain_value'), key);
    assert.notEqual(cache.keyOf('ask_plain_valuf'), key);
  });

  await t.test('bounded: the oldest entry goes when full', () => {
    const cache = createPrincipalCache({ ttlMs: 1000, maxEntries: 2, shared: false });
    for (const k of ['a', 'b', 'c']) cache.set(cache.keyOf(k), { principal: alice, validUntil: null }, cache.readStarts());
    assert.equal(cache.size(), 2);
    assert.equal(cache.get(cache.keyOf('a')), undefined);
    assert.equal(cache.get(cache.keyOf('c')), alice);
  });

  await t.test('ttl 0 turns it off', () => {
    const cache = createPrincipalCache({ ttlMs: 0, maxEntries: 10, shared: true });
    cache.set(cache.keyOf('a'), { principal: alice, validUntil: null }, cache.readStarts());
    assert.equal(cache.get(cache.keyOf('a')), undefined);
  });

  await t.test('invalidate clears at once; with a shared database it also outwaits the other instances', async () => {
    for (const shared of [false, true]) {
      const cache = createPrincipalCache({ ttlMs: 300, maxEntries: 10, shared });
      cache.set(cache.keyOf('a'), { principal: alice, validUntil: null }, cache.readStarts());
      const started = performance.now();
      const done = cache.invalidate();
      assert.equal(cache.get(cache.keyOf('a')), undefined, 'cleared before the wait');
      await done;
      const waited = performance.now() - started;
      if (shared) assert.ok(waited >= 295, `waited ${waited} ms`);
      else assert.ok(waited < 100, `waited ${waited} ms`);
    }
  });

  await t.test('concurrent misses of one credential share one check; a check in flight is not shared after invalidate', async () => {
    const cache = createPrincipalCache({ ttlMs: 500, maxEntries: 10, shared: false });
    const key = cache.keyOf('ask_secret');
    let reads = 0;
    const pending: (() => void)[] = [];
    const finish = () => {
      for (const r of pending.splice(0)) r();
    };
    const verify = async () => {
      reads++;
      await new Promise<void>((r) => pending.push(r));
      return { principal: reads === 1 ? alice : bob, validUntil: null };
    };
    const first = Array.from({ length: 50 }, () => cache.verifyOnce(key, verify));
    assert.equal(reads, 1, '50 requests that miss at once: one read');
    finish();
    assert.deepEqual(new Set((await Promise.all(first)).map((v) => v?.principal)), new Set([alice]));
    assert.equal(cache.get(key), alice, 'and it is cached');

    const before = cache.verifyOnce(cache.keyOf('other'), verify);
    await cache.invalidate();
    const after = cache.verifyOnce(cache.keyOf('other'), verify);
    assert.equal(reads, 3, 'a request after a revocation reads again');
    finish();
    assert.deepEqual([(await before)?.principal, (await after)?.principal], [bob, bob]);
  });
});
