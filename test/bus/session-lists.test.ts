import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PositionIndex } from '../../src/bus/nats/position-index.js';
import { SessionLists } from '../../src/bus/session-lists.js';

const seqs = (l: SessionLists<{ s: number; v?: string }>, id: string) => l.get(id)?.map((x) => x.s);

test('session lists - kept in sequence order, same sequence replaced, newest per session kept', () => {
  const lists = new SessionLists<{ s: number; v?: string }>(10, 3, (x) => x.s, 60_000);
  for (const s of [2, 1, 4, 3]) lists.put('a', { s });
  assert.deepEqual(seqs(lists, 'a'), [2, 3, 4], 'sorted, and the oldest dropped beyond 3');
  lists.put('a', { s: 3, v: 'new' });
  assert.deepEqual(
    lists.get('a')?.map((x) => x.v ?? '-'),
    ['-', 'new', '-'],
  );
  lists.forget('a');
  assert.equal(lists.get('a'), undefined);
});

test('session lists - the session least recently written to is dropped, reads do not count', () => {
  const lists = new SessionLists<{ s: number }>(2, 5, (x) => x.s, 60_000);
  lists.put('a', { s: 1 });
  lists.put('b', { s: 1 });
  lists.put('a', { s: 2 }); // a is now the most recent
  lists.get('b');
  lists.put('c', { s: 1 });
  assert.equal(lists.get('b'), undefined);
  assert.deepEqual(seqs(lists, 'a'), [1, 2]);
  assert.deepEqual(seqs(lists, 'c'), [1]);
});

test('session lists - a session not written to for idleMs is dropped, a written one is kept', () => {
  let t = 0;
  const lists = new SessionLists<{ s: number }>(
    100,
    5,
    (x) => x.s,
    30_000,
    () => t,
  );
  lists.put('a', { s: 1 });
  lists.put('b', { s: 1 });
  t = 20_000;
  lists.put('b', { s: 2 });
  t = 30_001;
  assert.equal(lists.get('a'), undefined, 'idle 30 s: a turn of its own is long over');
  assert.deepEqual(seqs(lists, 'b'), [1, 2]);
});

test('position index - forgets the hints of a session idle for longer than idleMs', () => {
  let t = 0;
  const positions = new PositionIndex(100, 64, 30_000, () => t);
  positions.record('a', { sequence: 3, streamSeq: 30 });
  t = 30_000;
  assert.deepEqual(positions.bounds('a', 4), { below: { sequence: 3, streamSeq: 30 } });
  t = 30_001;
  assert.deepEqual(positions.bounds('a', 4), {}, 'idle past 30 s: the hints are gone');
});
