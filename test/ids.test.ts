import assert from 'node:assert/strict';
import { test } from 'node:test';
import { idSequence, isUuid, newId, newIdAfter, uuidv7Millis } from '../src/ids.js';

test('newId: UUIDv7s, increasing and distinct across many refills of the random pool', () => {
  const before = Date.now();
  // ~340 ids draw one 4 KiB refill; 5,000 cross a dozen.
  const ids = Array.from({ length: 5000 }, () => newId());
  assert.ok(ids.every((id) => isUuid(id, ['7'])));
  assert.equal(new Set(ids).size, ids.length);
  for (let i = 1; i < ids.length; i++) assert.ok(ids[i]! > ids[i - 1]!, `id ${i} not above the one before`);
  assert.ok(uuidv7Millis(ids[0]!) >= before && uuidv7Millis(ids.at(-1)!) <= Date.now());
  // The random tails spread over their range: no stuck pool (all zeros, or one value repeated).
  const tails = new Set(ids.map((id) => id.slice(-4)));
  assert.ok(tails.size > 4000, `only ${tails.size} distinct 16-bit tails in 5,000 ids`);
});

test('newIdAfter and idSequence stay above an id from the future', () => {
  const future = '7fffffff-ffff-7fff-bfff-000000000000';
  const next = newIdAfter(future);
  assert.ok(next > future && isUuid(next, ['7']));
  const seq = idSequence();
  const run = Array.from({ length: 100 }, seq);
  assert.deepEqual([...run].sort(), run);
});
