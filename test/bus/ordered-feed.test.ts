import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OrderedFeed, type FeedSource } from '../../src/bus/ordered-feed.js';
import type { LoggedEvent } from '../../src/bus/ports.js';

function ev(sequence: number): LoggedEvent {
  return { id: `id-${sequence}`, type: 't', ts: '', session_id: 's', sequence, context: {}, data: {} };
}

/** A log of `stored` events plus a handle to push live events by hand. */
function fakeSource(stored: LoggedEvent[], { idlePollMs = 0, idlePollMaxMs = undefined as number | undefined, failFetch = false } = {}) {
  let push: (e: LoggedEvent) => void = () => undefined;
  let stale: () => void = () => undefined;
  let fetches = 0;
  const source: FeedSource = {
    async fetch(after) {
      fetches++;
      if (failFetch) throw new Error('log unreachable');
      return stored.filter((e) => e.sequence > after).slice(0, 3); // short pages on purpose
    },
    listen(p, _fail, s) {
      push = p;
      stale = s;
      return { stop: () => undefined, ready: Promise.resolve() };
    },
    idlePollMs,
    idlePollMaxMs,
  };
  return { source, push: (e: LoggedEvent) => push(e), stale: () => stale(), fetches: () => fetches };
}

async function take(feed: OrderedFeed, n: number): Promise<number[]> {
  const seen: number[] = [];
  for await (const e of feed) if (seen.push(e.sequence) >= n) break;
  return seen;
}

test('ordered feed - replays in pages, then drops duplicate and stale live events', async () => {
  const stored = [1, 2, 3, 4, 5].map(ev);
  const src = fakeSource(stored);
  const feed = new OrderedFeed(src.source, 1);
  const out = take(feed, 5);
  await new Promise((r) => setImmediate(r));
  stored.push(ev(6));
  src.push(ev(3)); // already replayed
  src.push(ev(6));
  src.push(ev(6)); // duplicate
  assert.deepEqual(await out, [2, 3, 4, 5, 6]);
});

test('ordered feed - a live event ahead of the cursor back-fills the gap from the log', async () => {
  const stored = [1, 2].map(ev);
  const src = fakeSource(stored);
  const feed = new OrderedFeed(src.source);
  const out = take(feed, 6);
  await new Promise((r) => setImmediate(r));
  stored.push(...[3, 4, 5, 6].map(ev));
  src.push(ev(6)); // 3..5 were "lost" on the live path
  assert.deepEqual(await out, [1, 2, 3, 4, 5, 6]);
  assert.ok(src.fetches() >= 3, 'the gap was read from the log');
});

test('ordered feed - the idle poll picks up events nobody pushed (other processes)', async () => {
  const stored = [ev(1)];
  const src = fakeSource(stored, { idlePollMs: 20 });
  const out = take(new OrderedFeed(src.source), 2);
  setTimeout(() => stored.push(ev(2)), 50);
  assert.deepEqual(await out, [1, 2]);
});

test('ordered feed - with idlePollMaxMs a feed polls that rarely until a push, then idlePollMs later, backing off again', async () => {
  const stored = [ev(1)];
  const fixed = fakeSource(stored, { idlePollMs: 10 });
  const backing = fakeSource(stored, { idlePollMs: 10, idlePollMaxMs: 80 });
  const feeds = [new OrderedFeed(fixed.source), new OrderedFeed(backing.source)];
  const runs = feeds.map((f) => take(f, 3));
  await new Promise((r) => setTimeout(r, 400));
  const [fixedPolls, backingPolls] = [fixed.fetches(), backing.fetches()];
  assert.ok(fixedPolls >= 20, `a fixed 10 ms poll read the log ${fixedPolls} times in 400 ms`);
  // 10, 20, 40, 80, 80, 80 ms: at most about 8 reads (the replay's included).
  assert.ok(backingPolls <= 9, `the backing-off poll read the log ${backingPolls} times in 400 ms`);
  stored.push(ev(2));
  backing.push(ev(2));
  fixed.push(ev(2));
  await new Promise((r) => setTimeout(r, 5));
  const afterPush = backing.fetches();
  stored.push(ev(3)); // appended elsewhere: only a poll finds it, and it comes idlePollMs after the push
  const started = Date.now();
  assert.deepEqual(await runs[1], [1, 2, 3]);
  assert.ok(Date.now() - started < 60, `found ${Date.now() - started} ms later: the push reset the interval`);
  assert.ok(backing.fetches() > afterPush);
  assert.deepEqual(await runs[0], [1, 2, 3]);
});

test('ordered feed - stale() makes a feed without idle poll re-read the log, also when it comes mid-delivery', {
  timeout: 5000,
}, async () => {
  const stored = [ev(1)];
  const src = fakeSource(stored); // idlePollMs 0: nothing but stale() or a push wakes it
  const feed = new OrderedFeed(src.source);
  const seen: number[] = [];
  const loop = (async () => {
    for await (const e of feed) {
      seen.push(e.sequence);
      if (e.sequence === 2) {
        // Appended elsewhere while this consumer still handles event 2: the hint must not be lost.
        stored.push(ev(3));
        src.stale();
      }
      if (e.sequence === 3) break;
    }
  })();
  await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(seen, [1]);
  const fetchesWhileIdle = src.fetches();
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(src.fetches(), fetchesWhileIdle, 'no poll');
  stored.push(ev(2));
  src.push(ev(2)); // live, so 3's hint comes while the feed is not reading the log
  await loop;
  assert.deepEqual(seen, [1, 2, 3]);
});

test('ordered feed - a slow reader past the buffer cap catches up from the log', async () => {
  const stored = [ev(1)];
  const src = fakeSource(stored);
  const feed = new OrderedFeed(src.source, 0, 2);
  const out = take(feed, 10);
  await new Promise((r) => setImmediate(r));
  for (let s = 2; s <= 10; s++) {
    stored.push(ev(s));
    src.push(ev(s)); // pushed faster than read: the buffer overflows
  }
  assert.deepEqual(await out, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
});

test('ordered feed - a failing read ends iteration with the error, and closed() reports it', async () => {
  const feed = new OrderedFeed(fakeSource([], { failFetch: true }).source);
  await assert.rejects(take(feed, 1), /log unreachable/);
  const closed = await feed.closed();
  assert.ok(closed instanceof Error && /log unreachable/.test(closed.message));
});

test('ordered feed - close() before iterating ends it at once; a second iteration throws', async () => {
  const feed = new OrderedFeed(fakeSource([ev(1)]).source);
  feed.close();
  assert.deepEqual(await take(feed, 1), []);
  assert.equal(await feed.closed(), undefined);
  assert.throws(() => feed[Symbol.asyncIterator](), /only once/);
});
