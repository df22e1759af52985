import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RecentEvents } from '../../src/bus/nats/recent-events.js';
import type { LoggedEvent } from '../../src/bus/ports.js';
import { newId } from '../../src/ids.js';

const sid = newId();
const event = (sequence: number): LoggedEvent => ({
  id: newId(),
  type: 'e',
  ts: new Date().toISOString(),
  session_id: sid,
  sequence,
  context: {},
  data: {},
});

/** Events 1..n stored at stream sequences 10, 20, …, each behind the one before. */
function linked(recent: RecentEvents, n: number): LoggedEvent[] {
  const events = Array.from({ length: n }, (_, i) => event(i + 1));
  for (const [i, e] of events.entries()) recent.remember({ event: e, streamSeq: (i + 1) * 10, prevStreamSeq: i * 10 });
  return events;
}

const tailOf = (sequence: number, streamSeq: number) => ({ sequence, streamSeq, id: undefined });

describe('nats recent events (reads behind our own appends)', () => {
  it('follows the links back from the tail to the first event asked for, up to the limit', () => {
    const recent = new RecentEvents();
    const events = linked(recent, 5);
    assert.deepEqual(recent.after(sid, 2, tailOf(5, 50), 100), events.slice(2));
    assert.deepEqual(recent.after(sid, 0, tailOf(5, 50), 100), events);
    assert.deepEqual(recent.after(sid, 1, tailOf(5, 50), 2), events.slice(1, 3));
  });

  it('a tail that is not one of ours, a missing event or a broken link sends the read to the server', () => {
    const recent = new RecentEvents();
    linked(recent, 5);
    assert.equal(recent.after(sid, 2, tailOf(6, 60), 100), null, 'another writer appended since');
    assert.equal(recent.after(sid, 2, tailOf(5, 51), 100), null, 'same sequence, another message (purged and refilled)');
    const gap = new RecentEvents();
    const first = event(1);
    gap.remember({ event: first, streamSeq: 10, prevStreamSeq: 0 });
    gap.remember({ event: event(3), streamSeq: 30, prevStreamSeq: 20 });
    assert.equal(gap.after(sid, 0, tailOf(3, 30), 100), null, 'event 2 unknown');
    assert.deepEqual(gap.after(sid, 2, tailOf(3, 30), 100)?.length, 1, 'only what is needed must be known');
    const broken = new RecentEvents();
    broken.remember({ event: event(1), streamSeq: 10, prevStreamSeq: 0 });
    broken.remember({ event: event(2), streamSeq: 25, prevStreamSeq: 15 });
    assert.equal(broken.after(sid, 0, tailOf(2, 25), 100), null, 'event 2 was stored behind a message we do not know');
  });

  it('nothing to read, an unknown session: null', () => {
    const recent = new RecentEvents();
    linked(recent, 3);
    assert.equal(recent.after(sid, 3, tailOf(3, 30), 100), null);
    assert.equal(recent.after(newId(), 0, tailOf(3, 30), 100), null);
  });

  it('keeps the newest events per session and the most recently used sessions', () => {
    const recent = new RecentEvents(2, 3);
    const events = linked(recent, 5);
    assert.deepEqual(recent.after(sid, 2, tailOf(5, 50), 100), events.slice(2));
    assert.equal(recent.after(sid, 1, tailOf(5, 50), 100), null, 'event 2 was dropped');
    const other = { ...event(1), session_id: newId() };
    recent.remember({ event: other, streamSeq: 7, prevStreamSeq: 0 });
    recent.remember({ event: { ...event(1), session_id: newId() }, streamSeq: 8, prevStreamSeq: 0 });
    assert.equal(recent.after(sid, 4, tailOf(5, 50), 100), null, 'least recently used session dropped');
    assert.deepEqual(recent.after(other.session_id, 0, tailOf(1, 7), 100), [other]);
  });

  it('forgets a session idle longer than idleMs: the read goes to the server', () => {
    let t = 0;
    const recent = new RecentEvents(1_000, 16, 30_000, () => t);
    const events = linked(recent, 3);
    t = 30_000;
    assert.deepEqual(recent.after(sid, 0, tailOf(3, 30), 100), events, 'within idleMs');
    t = 30_001;
    assert.equal(recent.after(sid, 0, tailOf(3, 30), 100), null);
  });
});
