import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SessionEvent } from '../../schemas/events.js';
import { createBus, type Bus } from '../../src/bus/index.js';
import { rawLog } from '../helpers/raw-log.js';
import { createSessionHub, type SessionHub } from '../../src/events/session-hub.js';
import { SseStream, type SseSink } from '../../src/http/sse-stream.js';
import { TimerWheel } from '../../src/timers/index.js';
import { newId } from '../../src/ids.js';
import { createLogger } from '../../src/log.js';
import { createStore, type Store } from '../../src/db/index.js';
import { seedEmbeddedDataDir } from '../helpers/pglite-template.js';

const log = createLogger('silent');
const wheel = new TimerWheel({ shortestMs: 60_000 });

/** An SSE stream over a sink that records the ids of the event frames written to it. */
function recordingStream() {
  const ids: string[] = [];
  const written: string[] = [];
  const sink: SseSink = {
    write: (chunk) => {
      written.push(chunk);
      for (const m of chunk.matchAll(/^id: (\S+)$/gm)) ids.push(m[1]!);
      return true;
    },
    end: () => undefined,
    abort: () => undefined,
  };
  const stream = new SseStream(sink, { heartbeatMs: 60_000, cycleMs: 3_600_000, maxBufferBytes: 1 << 20 }, wheel);
  return { stream, ids, text: () => written.join('') };
}

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200 && !cond(); i++) await sleep(10);
  assert.ok(cond(), what);
}

describe('session hub - replays served from memory', () => {
  let dataDir: string;
  let store: Store;
  let bus: Bus<SessionEvent>;
  let hub: SessionHub;
  let reads = 0;

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'hub-'));
    await seedEmbeddedDataDir(dataDir);
    store = await createStore({ dataDir, log });
    bus = await createBus<SessionEvent>({ kind: 'local', store, log, leaseMs: 1000 });
    const read = bus.events.read;
    bus.events.read = (...args) => {
      reads++;
      return read.apply(bus.events, args);
    };
    hub = createSessionHub({ bus, log });
  });
  after(async () => {
    hub.close();
    await bus.close();
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function sessionWithHistory(n: number): Promise<{ sessionId: string; ids: string[] }> {
    const sessionId = newId();
    const r = await rawLog(bus.events).append(
      sessionId,
      Array.from({ length: n }, (_, i) => ({ type: 'input.message', data: { i } })),
    );
    assert.ok(r.ok);
    return { sessionId, ids: r.events.map((e) => e.id) };
  }

  it('the second client replaying a session reads nothing from the log and gets the same events', async () => {
    const { sessionId, ids } = await sessionWithHistory(30);
    const a = recordingStream();
    const readsBefore = reads;
    await hub.attach(sessionId, a.stream, { afterSequence: 0, filter: null });
    assert.deepEqual(a.ids, ids);
    assert.equal(reads - readsBefore, 1, 'the first replay reads the log once');

    const b = recordingStream();
    await hub.attach(sessionId, b.stream, { afterSequence: 0, filter: null });
    const c = recordingStream();
    await hub.attach(sessionId, c.stream, { afterSequence: 10, filter: null });
    assert.deepEqual(b.ids, ids);
    assert.deepEqual(c.ids, ids.slice(10));
    assert.equal(reads - readsBefore, 1, 'later clients replay from memory');

    const live = await rawLog(bus.events).append(sessionId, [{ type: 'turn.started' }]);
    assert.ok(live.ok);
    await until(() => a.ids.length === 31 && b.ids.length === 31 && c.ids.length === 21, 'every client gets the live event');
    assert.equal(b.ids.at(-1), live.events[0]!.id);
    for (const s of [a, b, c]) s.stream.end();
  });

  it('clients resuming from the same point at once share one log read', async () => {
    const { sessionId, ids } = await sessionWithHistory(12);
    const readsBefore = reads;
    const clients = Array.from({ length: 8 }, recordingStream);
    await Promise.all(clients.map((c) => hub.attach(sessionId, c.stream, { afterSequence: 0, filter: null })));
    for (const c of clients) assert.deepEqual(c.ids, ids);
    assert.equal(reads - readsBefore, 1);
    for (const c of clients) c.stream.end();
  });

  it('knows the sequence of recent events of a watched session, and nothing of other sessions', async () => {
    const { sessionId, ids } = await sessionWithHistory(5);
    const other = await sessionWithHistory(2);
    assert.equal(await hub.recentSequence(sessionId, ids[3]!), undefined, 'not watched yet');
    const a = recordingStream();
    await hub.attach(sessionId, a.stream, { afterSequence: 0, filter: null });
    assert.equal(await hub.recentSequence(sessionId, ids[3]!), 4);
    assert.equal(await hub.recentSequence(sessionId, other.ids[0]!), undefined, "another session's event id");
    assert.equal(await hub.recentSequence(other.sessionId, ids[3]!), undefined);
    a.stream.end();
  });

  it('a session watched before its first event gets it live and remembers it for resumes', async () => {
    const sessionId = newId();
    const a = recordingStream();
    await hub.attach(sessionId, a.stream, { afterSequence: 0, filter: null });
    assert.equal(await hub.recentSequence(sessionId, newId()), undefined, 'nothing kept for a session with no events');
    const live = await rawLog(bus.events).append(sessionId, [{ type: 'turn.started' }]);
    assert.ok(live.ok);
    await until(() => a.ids.length === 1, 'the live event');
    assert.equal(await hub.recentSequence(sessionId, live.events[0]!.id), 1, 'the first frame is kept for resumes');
    const readsBefore = reads;
    const b = recordingStream();
    await hub.attach(sessionId, b.stream, { afterSequence: 0, filter: null });
    assert.deepEqual(b.ids, a.ids);
    assert.equal(reads, readsBefore, 'replayed from memory');
    for (const s of [a, b]) s.stream.end();
  });

  it('clients leaving one by one: the rest still get live events, the last one keeps the watch for a reconnect', async () => {
    const { sessionId } = await sessionWithHistory(1);
    const [a, b] = [recordingStream(), recordingStream()];
    await hub.attach(sessionId, a.stream, { afterSequence: 1, filter: null });
    await hub.attach(sessionId, b.stream, { afterSequence: 1, filter: null });
    const watched = hub.watchedCount();
    a.stream.end();
    const first = await rawLog(bus.events).append(sessionId, [{ type: 'turn.started' }]);
    assert.ok(first.ok);
    await until(() => b.ids.length === 1, 'the remaining client gets the event');
    assert.deepEqual(a.ids, [], 'the client that left gets nothing');
    b.stream.end();
    const c = recordingStream();
    await hub.attach(sessionId, c.stream, { afterSequence: 2, filter: null });
    assert.equal(hub.watchedCount(), watched, 'the same watch, within the grace period');
    const second = await rawLog(bus.events).append(sessionId, [{ type: 'turn.completed' }]);
    assert.ok(second.ok);
    await until(() => c.ids.length === 1, 'the reconnected client gets the next event');
    assert.deepEqual(c.ids, [second.events[0]!.id]);
    assert.deepEqual(b.ids, [first.events[0]!.id]);
    c.stream.end();
  });

  it('clients of one session opened at once share one watch and one tail read; a deleted session ends them', async () => {
    const { sessionId, ids } = await sessionWithHistory(3);
    let tails = 0;
    const lastSequence = bus.events.lastSequence;
    bus.events.lastSequence = (id) => {
      if (id === sessionId) tails++;
      return lastSequence.call(bus.events, id);
    };
    const watchedBefore = hub.watchedCount();
    const clients = Array.from({ length: 3 }, recordingStream);
    try {
      await Promise.all(clients.map((c) => hub.attach(sessionId, c.stream, { afterSequence: 0, filter: null })));
      const late = recordingStream();
      clients.push(late);
      await hub.attach(sessionId, late.stream, { afterSequence: 1, filter: null });
    } finally {
      bus.events.lastSequence = lastSequence;
    }
    assert.equal(tails, 1, 'the tail is read once for the session');
    assert.equal(hub.watchedCount(), watchedBefore + 1);
    assert.deepEqual(clients[3]!.ids, ids.slice(1));
    hub.closeSession(sessionId);
    await until(() => clients.every((c) => !c.stream.open), 'every stream of the deleted session ended');
    assert.equal(hub.watchedCount(), watchedBefore, 'the watch is gone');
  });
});

describe('session hub - a failing feed', () => {
  let dataDir: string;
  let store: Store;
  let bus: Bus<SessionEvent>;
  let hub: SessionHub;
  /** Follows the hub opened, by the afterSequence it asked for, and how many of them to fail at once. */
  const follows: number[] = [];
  let failNext = 0;
  let failCurrent: () => void = () => undefined;

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'hub-fail-'));
    await seedEmbeddedDataDir(dataDir);
    store = await createStore({ dataDir, log });
    bus = await createBus<SessionEvent>({ kind: 'local', store, log, leaseMs: 1000 });
    const follow = bus.events.follow.bind(bus.events);
    // The real feed, with a switch that ends it with an error (as a broken read or subscription would).
    bus.events.follow = (sessionId, sink, opts) => {
      follows.push(opts?.afterSequence ?? 0);
      let failed = false;
      const feed = follow(sessionId, { event: (e) => sink.event(e), end: (err) => failed || sink.end(err) }, opts);
      failCurrent = () => {
        failed = true;
        feed.close();
        sink.end(new Error('feed broke'));
      };
      if (failNext > 0) {
        failNext--;
        queueMicrotask(failCurrent);
      }
      return feed;
    };
    hub = createSessionHub({ bus, log });
  });
  after(async () => {
    hub.close();
    await bus.close();
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('is reopened after the last event its clients got: nothing lost, nothing twice', async () => {
    const sessionId = newId();
    const a = recordingStream();
    follows.length = 0;
    await hub.attach(sessionId, a.stream, { afterSequence: 0, filter: null });
    const first = await rawLog(bus.events).append(sessionId, [{ type: 'input.message' }, { type: 'turn.started' }]);
    assert.ok(first.ok);
    await until(() => a.ids.length === 2, 'live events');
    failCurrent();
    const second = await rawLog(bus.events).append(sessionId, [{ type: 'turn.completed' }]);
    assert.ok(second.ok);
    await until(() => a.ids.length === 3, 'the event appended while the feed was down');
    assert.deepEqual(
      a.ids,
      [...first.events, ...second.events].map((e) => e.id),
    );
    assert.deepEqual(follows, [0, 2], 'reopened after sequence 2');
    assert.ok(a.stream.open);
    a.stream.end();
  });

  it('after retryPolicies.sessionFeed.maxAttempts failures in a row its clients get stream_reset', async () => {
    const sessionId = newId();
    const a = recordingStream();
    follows.length = 0;
    failNext = 4;
    await hub.attach(sessionId, a.stream, { afterSequence: 0, filter: null });
    await until(() => !a.stream.open, 'the stream ended');
    assert.match(a.text(), /event: disconnecting\ndata: \{"reason":"stream_reset"/);
    assert.equal(follows.length, 4, 'opened once and reopened three times');
    // The watch was dropped: the next client opens a new one, which follows again.
    const b = recordingStream();
    await hub.attach(sessionId, b.stream, { afterSequence: 0, filter: null });
    assert.equal(follows.length, 5);
    assert.ok(b.stream.open);
    b.stream.end();
  });
});
