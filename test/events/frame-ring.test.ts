import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FrameRing, type Frame } from '../../src/events/frame-ring.js';

const frame = (sequence: number): Frame => ({ id: `e${sequence}`, sequence, type: 't', text: `f${sequence}` });
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => frame(from + i));
const seqs = (frames: Frame[] | undefined) => frames?.map((f) => f.sequence);

describe('FrameRing', () => {
  it('keeps the last `capacity` frames in order and answers replays it fully covers', () => {
    const ring = new FrameRing(4);
    for (const f of range(1, 6)) ring.push(f);
    assert.equal(ring.size, 4);
    assert.deepEqual([ring.firstSequence, ring.lastSequence], [3, 6]);
    assert.deepEqual(seqs(ring.after(2)), [3, 4, 5, 6], 'from just before the oldest frame');
    assert.deepEqual(seqs(ring.after(4)), [5, 6]);
    assert.deepEqual(seqs(ring.after(6)), []);
    assert.equal(ring.after(1), undefined, 'frame 2 was dropped: the caller must read the log');
    assert.equal(new FrameRing(4).after(0), undefined, 'an empty ring covers nothing');
  });

  it('grows its slots as frames come (an idle session holds none) and keeps order across growth, prepends and wrap-around', () => {
    const ring = new FrameRing(20);
    for (const f of range(11, 13)) ring.push(f);
    ring.prepend(range(1, 10), 10);
    assert.deepEqual(
      seqs(ring.after(0)),
      range(1, 13).map((f) => f.sequence),
      'prepended in front of pushed frames, past two growths',
    );
    for (const f of range(14, 50)) ring.push(f);
    assert.deepEqual(
      seqs(ring.after(30)),
      range(31, 50).map((f) => f.sequence),
      'the newest 20 after wrapping',
    );
    assert.equal(ring.after(29), undefined);
    ring.clear();
    ring.push(frame(60));
    assert.deepEqual(seqs(ring.after(59)), [60], 'usable again after clear');
  });

  it('finds the sequence of a kept event id, and forgets dropped ones', () => {
    const ring = new FrameRing(3);
    for (const f of range(1, 5)) ring.push(f);
    assert.equal(ring.sequenceOf('e5'), 5);
    assert.equal(ring.sequenceOf('e3'), 3);
    assert.equal(ring.sequenceOf('e2'), undefined);
  });

  it('never holds a gap: a push that does not follow the last frame starts over', () => {
    const ring = new FrameRing(4);
    for (const f of range(1, 3)) ring.push(f);
    ring.push(frame(7));
    assert.deepEqual(seqs(ring.after(6)), [7]);
    assert.equal(ring.after(2), undefined);
  });

  it('prepends replayed frames that end where the ring starts, newest first, up to capacity', () => {
    const ring = new FrameRing(5);
    for (const f of range(8, 9)) ring.push(f);
    ring.prepend(range(1, 7), 9);
    assert.deepEqual([ring.firstSequence, ring.lastSequence, ring.size], [5, 9, 5], 'only the newest that fit are kept');
    assert.deepEqual(seqs(ring.after(4)), [5, 6, 7, 8, 9]);
    ring.push(frame(10));
    assert.deepEqual(seqs(ring.after(5)), [6, 7, 8, 9, 10], 'still a ring after a prepend');
  });

  it('prepends into an empty ring only a page that ends at the last published sequence', () => {
    const ring = new FrameRing(10);
    ring.prepend(range(1, 3), 5);
    assert.equal(ring.size, 0, 'events 4 and 5 would be missing');
    ring.prepend(range(1, 5), 5);
    assert.deepEqual(seqs(ring.after(0)), [1, 2, 3, 4, 5]);
    ring.prepend(range(1, 3), 5);
    assert.deepEqual(seqs(ring.after(0)), [1, 2, 3, 4, 5], 'a page that does not end just before the ring is ignored');
  });

  it('stops prepending at a hole in the replayed page', () => {
    const ring = new FrameRing(10);
    ring.push(frame(6));
    ring.prepend([frame(1), frame(2), frame(4), frame(5)], 6);
    assert.deepEqual(seqs(ring.after(3)), [4, 5, 6]);
    assert.equal(ring.after(2), undefined);
  });
});

describe('FrameRing - size in characters', () => {
  const big = (sequence: number, chars: number): Frame => ({ id: `e${sequence}`, sequence, type: 't', text: 'x'.repeat(chars) });

  it('drops the oldest frames to stay within maxChars, always keeping the newest', () => {
    const ring = new FrameRing(100, 1000);
    for (let s = 1; s <= 5; s++) ring.push(big(s, 300));
    assert.deepEqual([ring.firstSequence, ring.lastSequence], [3, 5], '3 × 300 fit in 1000');
    ring.push(big(6, 5000));
    assert.deepEqual([ring.firstSequence, ring.lastSequence, ring.size], [6, 6, 1], 'an oversized frame is kept alone');
    ring.push(big(7, 10));
    assert.deepEqual([ring.firstSequence, ring.size], [7, 1]);
  });

  it('prepends only what fits within maxChars', () => {
    const ring = new FrameRing(100, 999);
    ring.push(big(10, 400));
    ring.prepend([big(7, 300), big(8, 300), big(9, 300)], 10);
    assert.deepEqual(seqs(ring.after(8)), [9, 10]);
    assert.equal(ring.after(7), undefined);
  });
});
