import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { iterateFeed } from '../../src/bus/feed-iterator.js';
import { FeedGroup, type FeedSource, type LiveInput } from '../../src/bus/ordered-feed.js';
import type { EventSink, EventSubscription, LoggedEvent } from '../../src/bus/ports.js';

function ev(sequence: number): LoggedEvent {
  return { id: `id-${sequence}`, type: 't', ts: '', session_id: 's', sequence, context: {}, data: {} };
}

/** A log of `stored` events plus a handle to push live events by hand (to the last feed that listened). */
function fakeSource(
  stored: LoggedEvent[],
  { idlePollMs = 0, idlePollMaxMs = undefined as number | undefined, failFetch = false, pageSize = 3 } = {},
) {
  let input: LiveInput | undefined;
  let fetches = 0;
  let stops = 0;
  const source: FeedSource = {
    async fetch(_sessionId, after) {
      fetches++;
      if (failFetch) throw new Error('log unreachable');
      return stored.filter((e) => e.sequence > after).slice(0, pageSize); // short pages on purpose
    },
    listen(_sessionId, live) {
      input = live;
      return { stop: () => void stops++, ready: Promise.resolve() };
    },
    idlePollMs,
    idlePollMaxMs,
  };
  return {
    source,
    push: (e: LoggedEvent) => input!.push(e),
    stale: () => input!.stale(),
    fetches: () => fetches,
    stops: () => stops,
  };
}

/** The async-iterator face over a feed of `group` (as EventReader.subscribe). */
function subscribe(group: FeedGroup, afterSequence = 0, sessionId = 's'): EventSubscription<LoggedEvent> {
  return iterateFeed((sink) => group.open(sessionId, sink, afterSequence));
}

async function take(feed: EventSubscription<LoggedEvent>, n: number): Promise<number[]> {
  const seen: number[] = [];
  for await (const e of feed) if (seen.push(e.sequence) >= n) break;
  return seen;
}

/** A sink that records what it got and how the feed ended. */
function recordingSink(onEvent: (e: LoggedEvent) => void | Promise<void> = () => undefined) {
  const seen: number[] = [];
  const ends: (Error | null)[] = [];
  const sink: EventSink<LoggedEvent> = {
    event(e) {
      seen.push(e.sequence);
      return onEvent(e);
    },
    end: (err) => void ends.push(err),
  };
  return { sink, seen, ends };
}

// The poll wheel's interval does not keep a process alive (a server has its sockets for that): this file has nothing else.
const keepAlive = setInterval(() => undefined, 1000);
after(() => clearInterval(keepAlive));

const tick = () => new Promise((r) => setImmediate(r));

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 300 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(cond(), what);
}

test('ordered feed - replays in pages, then drops duplicate and stale live events', async () => {
  const stored = [1, 2, 3, 4, 5].map(ev);
  const src = fakeSource(stored);
  const feed = subscribe(new FeedGroup(src.source), 1);
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
  const feed = subscribe(new FeedGroup(src.source));
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
  const out = take(subscribe(new FeedGroup(src.source)), 2);
  setTimeout(() => stored.push(ev(2)), 50);
  assert.deepEqual(await out, [1, 2]);
});

test('ordered feed - with idlePollMaxMs a feed polls that rarely until a push, then idlePollMs later, backing off again', async () => {
  const stored = [ev(1)];
  const fixed = fakeSource(stored, { idlePollMs: 10 });
  const backing = fakeSource(stored, { idlePollMs: 10, idlePollMaxMs: 80 });
  const feeds = [subscribe(new FeedGroup(fixed.source)), subscribe(new FeedGroup(backing.source))];
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
  const feed = subscribe(new FeedGroup(src.source));
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
  const feed = subscribe(new FeedGroup(src.source, { maxBuffered: 2 }));
  const out = take(feed, 10);
  await new Promise((r) => setImmediate(r));
  for (let s = 2; s <= 10; s++) {
    stored.push(ev(s));
    src.push(ev(s)); // pushed faster than read: the buffer overflows
  }
  assert.deepEqual(await out, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
});

test('ordered feed - a failing read ends iteration with the error, and closed() reports it', async () => {
  const feed = subscribe(new FeedGroup(fakeSource([], { failFetch: true }).source));
  await assert.rejects(take(feed, 1), /log unreachable/);
  const closed = await feed.closed();
  assert.ok(closed instanceof Error && /log unreachable/.test(closed.message));
});

test('ordered feed - close() before iterating ends it at once; a second iteration throws', async () => {
  const feed = subscribe(new FeedGroup(fakeSource([ev(1)]).source));
  feed.close();
  assert.deepEqual(await take(feed, 1), []);
  assert.equal(await feed.closed(), undefined);
  assert.throws(() => feed[Symbol.asyncIterator](), /only once/);
});

test('followed feed - pushes replay then live in order to the sink, dropping duplicates, without awaiting the sink', async () => {
  const stored = [1, 2, 3, 4].map(ev);
  const src = fakeSource(stored);
  const { sink, seen, ends } = recordingSink();
  const feed = new FeedGroup(src.source).open('s', sink, 1);
  await until(() => seen.length === 3, 'replayed 2..4');
  stored.push(ev(5), ev(6));
  src.push(ev(4)); // already replayed
  src.push(ev(5));
  assert.deepEqual(seen, [2, 3, 4, 5], 'a live event in sequence reaches the sink at once, in the push');
  src.push(ev(5)); // duplicate
  src.push(ev(6));
  assert.deepEqual(seen, [2, 3, 4, 5, 6]);
  feed.close();
  feed.close();
  assert.deepEqual(ends, [null], 'end(null) once');
  src.push(ev(7));
  assert.deepEqual(seen, [2, 3, 4, 5, 6], 'nothing after close');
  assert.equal(src.stops(), 1, 'the live listener was stopped');
});

test('followed feed - a jump in sequence back-fills from the log; a short backfill (replica lag) is retried after a pause', async () => {
  const stored = [ev(1)];
  const src = fakeSource(stored);
  const { sink, seen } = recordingSink();
  new FeedGroup(src.source).open('s', sink);
  await until(() => seen.length === 1, 'replayed 1');
  const before = src.fetches();
  src.push(ev(4)); // 2 and 3 are not readable yet: the log lags the live path
  await tick();
  assert.deepEqual(seen, [1]);
  setTimeout(() => stored.push(ev(2), ev(3), ev(4)), 10);
  await until(() => seen.length === 4, 'the gap filled once the log had it');
  assert.deepEqual(seen, [1, 2, 3, 4]);
  assert.ok(src.fetches() - before >= 2, 'read again after the short backfill');
});

test('followed feed - a sink that holds the feed gets later events in order after it settles; past the cap they are re-read from the log', async () => {
  const stored = [ev(1)];
  const src = fakeSource(stored, { pageSize: 100 });
  let release: () => void = () => undefined;
  const { sink, seen } = recordingSink((e) => (e.sequence === 1 ? new Promise<void>((r) => (release = r)) : undefined));
  new FeedGroup(src.source, { maxBuffered: 2 }).open('s', sink);
  await until(() => seen.length === 1, 'got 1, held');
  for (let s = 2; s <= 6; s++) {
    stored.push(ev(s));
    src.push(ev(s)); // the sink holds the feed: 2, 3 buffered, then the buffer overflows
  }
  assert.deepEqual(seen, [1]);
  const fetchesBefore = src.fetches();
  release();
  await until(() => seen.length === 6, 'caught up');
  assert.deepEqual(seen, [1, 2, 3, 4, 5, 6]);
  assert.ok(src.fetches() > fetchesBefore, 'the overflow was re-read from the log');
});

test('followed feed - stale() re-reads the log of an idle feed; staleAll() re-reads every feed of the group', async () => {
  const stored = [ev(1)];
  const src = fakeSource(stored);
  const group = new FeedGroup(src.source);
  const a = recordingSink();
  const b = recordingSink();
  group.open('s', a.sink);
  group.open('s', b.sink);
  await until(() => a.seen.length === 1 && b.seen.length === 1, 'both replayed');
  stored.push(ev(2));
  group.staleAll();
  await until(() => a.seen.length === 2 && b.seen.length === 2, 'both re-read the log');
  group.closeAll();
  assert.deepEqual(
    [a.seen, b.seen],
    [
      [1, 2],
      [1, 2],
    ],
  );
  assert.equal(group.feeds.size, 0);
});

test('followed feed - idle feeds share one poll timer: no Timeout per feed, and the wheel polls each', async () => {
  const stored = [ev(1)];
  const src = fakeSource(stored, { idlePollMs: 40 });
  const group = new FeedGroup(src.source);
  const timeouts = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
  const before = timeouts();
  const sinks = Array.from({ length: 200 }, () => recordingSink());
  for (const { sink } of sinks) group.open('s', sink);
  await until(() => sinks.every((s) => s.seen.length === 1), 'all replayed');
  assert.ok(timeouts() - before <= 1, `${timeouts() - before} timers for 200 idle feeds`);
  assert.equal(group.wheel!.size, 200, 'each idle feed has its poll on the wheel');
  stored.push(ev(2)); // appended elsewhere: only the polls find it
  await until(() => sinks.every((s) => s.seen.length === 2), 'every feed polled');
  group.closeAll();
  assert.equal(group.wheel!.size, 0, 'closed feeds leave the wheel');
});

test('followed feed - a sink that throws or rejects ends the feed with that error', async () => {
  const src = fakeSource([ev(1), ev(2)]);
  const group = new FeedGroup(src.source);
  const throwing = recordingSink(() => {
    throw new Error('sink broke');
  });
  const rejecting = recordingSink(() => Promise.reject(new Error('sink rejected')));
  group.open('s', throwing.sink);
  group.open('s', rejecting.sink);
  await until(() => throwing.ends.length === 1 && rejecting.ends.length === 1, 'both ended');
  assert.match(String(throwing.ends[0]), /sink broke/);
  assert.match(String(rejecting.ends[0]), /sink rejected/);
  assert.deepEqual([throwing.seen, rejecting.seen], [[1], [1]], 'nothing delivered after the failure');
  assert.equal(group.feeds.size, 0);
});

test('followed feed - a failing read ends the feed with the error; a listener that fails to start too', async () => {
  const failing = recordingSink();
  new FeedGroup(fakeSource([], { failFetch: true }).source).open('s', failing.sink);
  await until(() => failing.ends.length === 1, 'ended');
  assert.match(String(failing.ends[0]), /log unreachable/);
  const refused = recordingSink();
  const source: FeedSource = {
    fetch: async () => [],
    listen: () => ({ stop: () => undefined, ready: Promise.reject(new Error('no interest')) }),
    idlePollMs: 0,
  };
  new FeedGroup(source).open('s', refused.sink);
  await until(() => refused.ends.length === 1, 'ended');
  assert.match(String(refused.ends[0]), /no interest/);
});
