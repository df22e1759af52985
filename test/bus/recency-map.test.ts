import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RecencyMap } from '../../src/bus/recency-map.js';

/** A clock the test moves by hand, in ms. */
function manualClock() {
  let t = 1_000;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}

test('recency map - an entry not written for longer than idleMs is gone, a rewritten one stays', () => {
  const clock = manualClock();
  const map = new RecencyMap<string, number>({ max: 100, idleMs: 60_000, now: clock.now });
  map.set('a', 1);
  map.set('b', 1);
  clock.advance(40_000);
  map.set('b', 2); // written again: its idle time starts over
  map.get('a'); // a read is not a use
  clock.advance(20_000);
  assert.equal(map.get('a'), 1, 'exactly idleMs: still there');
  clock.advance(1);
  assert.equal(map.get('a'), undefined, 'idle past the limit: not returned even before a write sweeps it');
  assert.equal(map.get('b'), 2);
  clock.advance(40_000);
  map.set('c', 1);
  assert.equal(map.size, 1, 'the write swept every expired entry');
  assert.equal(map.get('b'), undefined);
  assert.equal(map.get('c'), 1);
});

test('recency map - a steady stream of new keys levels off at rate × idleMs entries', () => {
  const clock = manualClock();
  const map = new RecencyMap<number, string>({ max: 10_000, idleMs: 1_000, now: clock.now });
  const sizes: number[] = [];
  for (let key = 0; key < 5_000; key++) {
    map.set(key, 'x');
    clock.advance(10); // 100 new keys per second
    if (key % 500 === 499) sizes.push(map.size);
  }
  // The last second of keys, plus at most what came since the last sweep (every idleMs / 16).
  assert.ok(
    sizes.every((s) => s >= 101 && s <= 108),
    `flat, not growing to the count bound: ${sizes.join(', ')}`,
  );
});

test('recency map - at most max entries, the one written longest ago goes first', () => {
  const map = new RecencyMap<string, number>({ max: 2, idleMs: 60_000 });
  map.set('a', 1);
  map.set('b', 1);
  map.set('a', 2);
  map.set('c', 1);
  assert.equal(map.get('b'), undefined);
  assert.equal(map.get('a'), 2);
  assert.equal(map.get('c'), 1);
  map.delete('a');
  assert.equal(map.get('a'), undefined);
  assert.equal(map.size, 1);
});
