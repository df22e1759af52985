import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { TestContext } from 'node:test';
import type { LoggedEvent } from '../../src/bus/index.js';
import { newId } from '../../src/ids.js';
import { CASES, type ConformanceContext } from './conformance.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CHILD = fileURLToPath(new URL('./append-child.ts', import.meta.url));

/** Rejects when `p` takes longer than `ms`, naming what was awaited. */
export function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** Sequences are exactly 1..n and ids strictly increase with them. */
function assertContiguous(events: LoggedEvent[], n: number): void {
  assert.deepEqual(
    events.map((e) => e.sequence),
    Array.from({ length: n }, (_, i) => i + 1),
  );
  for (let i = 1; i < events.length; i++) assert.ok(events[i]!.id > events[i - 1]!.id, `id at sequence ${i + 1} must increase`);
  assert.equal(new Set(events.map((e) => e.id)).size, n);
}

/** Resolves once `cond` holds (checked every 5 ms, for at most 20 s: `within` reports the timeout). */
async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 4000 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
}

async function collect(sub: AsyncIterable<LoggedEvent>, n: number): Promise<LoggedEvent[]> {
  const got: LoggedEvent[] = [];
  for await (const e of sub) if (got.push(e) >= n) break;
  return got;
}

/** Starts append-child.ts processes, lets them go at the same moment, and returns the wall time (also used by local.test.ts). */
export async function raceChildren(t: TestContext, env: Record<string, string>, workers: string[]): Promise<number> {
  const children = workers.map((worker) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD], {
      cwd: ROOT,
      env: { ...process.env, ...env, WORKER: worker },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    t.after(() => void child.kill('SIGKILL'));
    const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    return { child, lines, exited };
  });
  for (const c of children) assert.equal((await within(c.lines.next(), 30_000, 'child ready')).value, 'ready');
  const started = performance.now();
  for (const c of children) c.child.stdin!.write('go\n');
  for (const c of children) {
    const line = await within(c.lines.next(), 60_000, 'child result');
    assert.ok(!line.done, 'child printed its result');
    assert.equal(await c.exited, 0);
  }
  return performance.now() - started;
}

export function defineEventLogCases(ctx: ConformanceContext): void {
  const { it } = ctx;

  it('append - numbers events 1..n, stamps id, ts and session, and reads them back in order', async () => {
    const sid = newId();
    const first = await ctx.bus.events.append(sid, [{ type: 'session.created', data: { n: 1 } }, { type: 'b' }]);
    assert.ok(first.ok);
    const batch = Array.from({ length: 200 }, (_, i) => ({ type: 'delta', data: { i } }));
    const second = await ctx.bus.events.append(sid, batch);
    assert.ok(second.ok);
    const all = await ctx.bus.events.read(sid);
    assert.deepEqual(all, [...first.events, ...second.events]);
    assertContiguous(all, 202);
    assert.equal(all[0]!.session_id, sid);
    assert.deepEqual(all[1]!.context, {});
    assert.deepEqual(all[1]!.data, {});
    assert.ok(!Number.isNaN(Date.parse(all[0]!.ts)));
    assert.equal(await ctx.bus.events.lastSequence(sid), 202);
  });

  it('append - an id that is already stored is not written again; the stored copy comes back', async () => {
    const sid = newId();
    const id = newId();
    const first = await ctx.bus.events.append(sid, [{ id, type: 'input.message', data: { v: 1 } }]);
    assert.ok(first.ok);
    const again = await ctx.bus.events.append(sid, [{ id, type: 'input.message', data: { v: 2 } }, { type: 'next' }]);
    assert.ok(again.ok);
    assert.deepEqual(again.events[0], first.events[0]);
    assert.equal(again.events[1]!.sequence, 2);
    // A retried batch that is fully stored succeeds even with the expectation it was first sent with.
    const retry = await ctx.bus.events.append(sid, [{ id, type: 'input.message' }], { expectedSequence: 0 });
    assert.deepEqual(retry, { ok: true, events: [first.events[0]] });
    assert.equal((await ctx.bus.events.read(sid)).length, 2);
  });

  it('append - ids minted before another writer appended (a start job’s) are stored after it, once', async () => {
    const sid = newId();
    const preamble = ['input.message', 'turn.started', 'session.activated'].map((type) => ({ id: newId(), type }));
    const queued = await ctx.bus.events.append(sid, [{ type: 'input.queued' }]);
    assert.ok(queued.ok);
    const expectedSequence = 1;
    const stored = await ctx.bus.events.append(sid, preamble, { expectedSequence });
    assert.ok(stored.ok, 'earlier-minted ids are not refused');
    assert.deepEqual(
      stored.events.map((e) => [e.id, e.sequence]),
      preamble.map((e, i) => [e.id, i + 2]),
    );
    const again = await ctx.bus.events.append(sid, preamble, { expectedSequence });
    assert.deepEqual(again, stored, 'a retry finds the stored copies');
    assert.deepEqual(
      (await ctx.bus.events.read(sid)).map((e) => e.type),
      ['input.queued', ...preamble.map((e) => e.type)],
    );
  });

  it('append - a wrong expectedSequence writes nothing and reports the current sequence', async () => {
    const sid = newId();
    assert.ok((await ctx.bus.events.append(sid, [{ type: 'session.created' }], { expectedSequence: 0 })).ok);
    assert.deepEqual(await ctx.bus.events.append(sid, [{ type: 'session.created' }], { expectedSequence: 0 }), {
      ok: false,
      currentSequence: 1,
    });
    const next = await ctx.bus.events.append(sid, [{ type: 'a' }, { type: 'b' }], { expectedSequence: 1 });
    assert.ok(next.ok && next.events[1]!.sequence === 3);
    assert.deepEqual(await ctx.bus.events.append(sid, [{ type: 'stale' }], { expectedSequence: 1 }), { ok: false, currentSequence: 3 });
    assert.equal((await ctx.bus.events.read(sid)).length, 3);
  });

  it('read - pages with afterSequence and limit; findById and lastSequence', async () => {
    const sid = newId();
    const r = await ctx.bus.events.append(
      sid,
      Array.from({ length: 30 }, (_, i) => ({ type: 't', data: { i } })),
    );
    assert.ok(r.ok);
    assert.deepEqual(
      (await ctx.bus.events.read(sid, { afterSequence: 10, limit: 5 })).map((e) => e.sequence),
      [11, 12, 13, 14, 15],
    );
    assert.deepEqual(
      (await ctx.bus.events.read(sid, { afterSequence: 25 })).map((e) => e.sequence),
      [26, 27, 28, 29, 30],
    );
    assert.deepEqual(await ctx.bus.events.read(sid, { afterSequence: 30 }), []);
    assert.deepEqual(await ctx.bus.events.findById(sid, r.events[17]!.id), r.events[17]);
    assert.equal(await ctx.bus.events.findById(newId(), r.events[17]!.id), null);
    assert.equal(await ctx.bus.events.findById(sid, newId()), null);
    // Any UUID a caller sends (since_id, around): one whose timestamp bits name the year 10889
    // is simply not found (it made an invalid start time for the NATS scan: a 500).
    assert.equal(await ctx.bus.events.findById(sid, 'ffffffff-ffff-4fff-bfff-ffffffffffff'), null);
    assert.equal(await ctx.bus.events.findById(sid, crypto.randomUUID()), null);
    assert.equal(await ctx.bus.events.lastSequence(newId()), 0);
    assert.deepEqual(await ctx.bus.events.read(newId()), []);
  });

  it('append - concurrent appends in one process get contiguous sequences', async (t) => {
    const sid = newId();
    const started = performance.now();
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => ctx.bus.events.append(sid, [{ type: 'c', data: { i } }])));
    const ms = performance.now() - started;
    assert.ok(results.every((r) => r.ok));
    assertContiguous(await ctx.bus.events.read(sid), 100);
    t.diagnostic(`100 concurrent single-event appends to one session: ${ms.toFixed(0)} ms (${Math.round(100_000 / ms)}/s)`);
  });

  it(CASES.multiProcessAppend, async (t) => {
    assert.ok(ctx.harness.childEnv, 'this harness cannot reach its backend from another process');
    const sid = newId();
    const count = 250;
    const env = { ...ctx.harness.childEnv, SESSION_ID: sid, COUNT: String(count), CONCURRENCY: '4' };
    const ms = await raceChildren(t, env, ['p1', 'p2']);
    const events = await ctx.bus.events.read(sid, { limit: 10_000 });
    assertContiguous(events, 2 * count);
    const keys = new Set(events.map((e) => `${String(e.data['worker'])}:${String(e.data['i'])}`));
    assert.equal(keys.size, 2 * count, 'every append stored exactly once');
    t.diagnostic(
      `${2 * count} appends from 2 processes × 4 writers to one session: ${ms.toFixed(0)} ms (${Math.round((2 * count * 1000) / ms)}/s)`,
    );
  });

  it('subscribe - replays stored events, then delivers live ones in order without gaps', async () => {
    const sid = newId();
    await ctx.bus.events.append(
      sid,
      Array.from({ length: 5 }, () => ({ type: 'old' })),
    );
    const sub = ctx.bus.events.subscribe(sid);
    const all = collect(sub, 25);
    for (let i = 0; i < 10; i++) await ctx.bus.events.append(sid, [{ type: 'live' }]);
    await Promise.all([ctx.bus.events.append(sid, [{ type: 'x' }, { type: 'y' }]), ctx.bus.events.append(sid, [{ type: 'z' }])]);
    await ctx.bus.events.append(
      sid,
      Array.from({ length: 7 }, () => ({ type: 'burst' })),
    );
    assertContiguous(await within(all, 15_000, 'subscription to deliver 25 events'), 25);
    assert.equal(await within(sub.closed(), 1000, 'closed() after break'), undefined);
    assert.throws(() => sub[Symbol.asyncIterator](), /only once/);
  });

  it('subscribe - starts after afterSequence, and close() ends the iteration', async () => {
    const sid = newId();
    await ctx.bus.events.append(
      sid,
      Array.from({ length: 4 }, () => ({ type: 'old' })),
    );
    const sub = ctx.bus.events.subscribe(sid, { afterSequence: 2 });
    const seen: number[] = [];
    const loop = (async () => {
      for await (const e of sub) {
        seen.push(e.sequence);
        if (e.sequence === 5) sub.close();
      }
    })();
    await ctx.bus.events.append(sid, [{ type: 'new' }]);
    await within(loop, 15_000, 'iteration to end after close()');
    assert.deepEqual(seen, [3, 4, 5]);
    assert.equal(await sub.closed(), undefined);
  });

  it('follow - pushes stored then live events to the sink in order without gaps; close() ends it with end(null), once', async () => {
    const sid = newId();
    await ctx.bus.events.append(
      sid,
      Array.from({ length: 3 }, () => ({ type: 'old' })),
    );
    const seen: LoggedEvent[] = [];
    const ends: (Error | null)[] = [];
    const feed = ctx.bus.events.follow(sid, { event: (e) => void seen.push(e), end: (err) => void ends.push(err) }, { afterSequence: 1 });
    for (let i = 0; i < 5; i++) await ctx.bus.events.append(sid, [{ type: 'live' }]);
    await Promise.all([ctx.bus.events.append(sid, [{ type: 'x' }, { type: 'y' }]), ctx.bus.events.append(sid, [{ type: 'z' }])]);
    await within(
      until(() => seen.length === 10),
      15_000,
      'follow to deliver 2..11',
    );
    assert.deepEqual(
      seen.map((e) => e.sequence),
      Array.from({ length: 10 }, (_, i) => i + 2),
    );
    feed.close();
    feed.close();
    await ctx.bus.events.append(sid, [{ type: 'after-close' }]);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(seen.length, 10, 'nothing after close');
    assert.deepEqual(ends, [null]);
  });

  it('follow - a sink that holds the feed (a promise) gets the events that came meanwhile after it, in order', async () => {
    const sid = newId();
    const seen: number[] = [];
    let release: () => void = () => undefined;
    const feed = ctx.bus.events.follow(sid, {
      event(e) {
        seen.push(e.sequence);
        if (e.sequence === 1) return new Promise<void>((r) => (release = r));
      },
      end: () => undefined,
    });
    await ctx.bus.events.append(sid, [{ type: 'first' }]);
    await within(
      until(() => seen.length === 1),
      15_000,
      'the first event',
    );
    for (let i = 0; i < 5; i++) await ctx.bus.events.append(sid, [{ type: 'while-held' }]);
    assert.deepEqual(seen, [1], 'held');
    release();
    await within(
      until(() => seen.length === 6),
      15_000,
      'the rest after release',
    );
    assert.deepEqual(seen, [1, 2, 3, 4, 5, 6]);
    feed.close();
  });

  it('purge - removes every event of that session and nothing else', async () => {
    const [a, b] = [newId(), newId()];
    for (const sid of [a, b]) await ctx.bus.events.append(sid, [{ type: '1' }, { type: '2' }, { type: '3' }]);
    await ctx.bus.events.purge(a);
    assert.deepEqual(await ctx.bus.events.read(a), []);
    assert.equal(await ctx.bus.events.lastSequence(a), 0);
    assert.equal((await ctx.bus.events.read(b)).length, 3);
    const again = await ctx.bus.events.append(a, [{ type: 'session.created' }], { expectedSequence: 0 });
    assert.ok(again.ok && again.events[0]!.sequence === 1);
  });
}
