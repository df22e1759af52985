import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { test } from 'node:test';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBus, type Bus, type LoggedEvent } from '../../src/bus/index.js';
import { ConflictError } from '../../src/errors.js';
import { newId } from '../../src/ids.js';
import { createLogger } from '../../src/log.js';
import { createStore, type PreparedSql } from '../../src/db/index.js';
import { createTestDatabase } from '../helpers/postgres.js';
import type { TurnClaim } from '../../src/bus/index.js';
import type { Store } from '../../src/db/index.js';
import { raceChildren, within } from './conformance-events.js';
import { CASES, runBusConformance, type BusHarness } from './conformance.js';
import { seedEmbeddedDataDir } from '../helpers/pglite-template.js';

const LEASE_MS = 1000;
const log = createLogger('silent');

/** Local buses sharing one store: PGlite when databaseUrl is absent, else that PostgreSQL. */
async function localHarness(database?: { url: string; drop(): Promise<void> }): Promise<BusHarness & { store: Store }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bus-local-'));
  if (!database) await seedEmbeddedDataDir(dataDir);
  const store = await createStore({ dataDir, databaseUrl: database?.url, log });
  const buses: Bus<LoggedEvent>[] = [];
  return {
    store,
    leaseMs: LEASE_MS,
    childEnv: database ? { BUS_KIND: 'local', BUS_DATABASE_URL: database.url } : undefined,
    async connect() {
      const bus = await createBus({ kind: 'local', store, log, leaseMs: LEASE_MS });
      buses.push(bus);
      return bus;
    },
    async close() {
      for (const bus of buses) await bus.close();
      await store.close();
      await database?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

runBusConformance({
  name: 'local on PGlite',
  create: () => localHarness(),
  skip: { cases: [CASES.multiProcessAppend], reason: 'PGlite is an embedded, single-process database; the PostgreSQL run covers it' },
});

runBusConformance({
  name: 'local on PostgreSQL',
  create: async () => localHarness(await createTestDatabase('bus')),
});

test('local - an event id stored in another session is refused with ConflictError', async (t) => {
  const harness = await localHarness(await createTestDatabase('bus_ids'));
  t.after(() => harness.close());
  const bus = await harness.connect();
  const id = newId();
  assert.ok((await bus.events.append(newId(), [{ id, type: 'a' }])).ok);
  await assert.rejects(bus.events.append(newId(), [{ id, type: 'a' }]), ConflictError);
});

/** Records the SQL the store runs from now on (the bus calls store.sql for every statement). */
function countQueries(store: Store): { texts: string[]; params: unknown[][] } {
  const seen = { texts: [] as string[], params: [] as unknown[][] };
  const sql = store.sql.bind(store);
  store.sql = ((query: string | PreparedSql, params: unknown[] = []) => {
    seen.texts.push(typeof query === 'string' ? query : query.text);
    seen.params.push(params);
    return sql(query, params);
  }) as Store['sql'];
  return seen;
}

/** Subscribes to each session and resolves each entry with its first `n` events. */
function firstEvents(bus: Bus<LoggedEvent>, sessions: string[], n: number): Promise<LoggedEvent[]>[] {
  return sessions.map(async (sid) => {
    const got: LoggedEvent[] = [];
    for await (const e of bus.events.subscribe(sid)) if (got.push(e) >= n) break;
    return got;
  });
}

test('local on PGlite - idle subscriptions run no query; appends still reach them', async (t) => {
  const harness = await localHarness();
  t.after(() => harness.close());
  const bus = await harness.connect();
  const sessions = Array.from({ length: 20 }, () => newId());
  const received = firstEvents(bus, sessions, 1);
  await new Promise((r) => setTimeout(r, 200)); // replay reads done
  const queries = countQueries(harness.store);
  await new Promise((r) => setTimeout(r, 1500));
  assert.deepEqual(queries.texts, [], 'no query while 20 subscriptions wait');
  for (const sid of sessions) await bus.events.append(sid, [{ type: 'ping' }]);
  const got = await within(Promise.all(received), 5000, 'every subscription to get its event');
  assert.deepEqual(
    got.map((events) => events[0]!.session_id),
    sessions,
  );
  assert.ok(!queries.texts.some((q) => /max\(sequence\)/.test(q)), 'nothing polled the tails');
});

test('local on PostgreSQL - appends by another process wake the feed; one tail query per poll for all watched sessions', async (t) => {
  const database = await createTestDatabase('bus_tails');
  const harness = await localHarness(database);
  const bus = await createBus({ kind: 'local', store: harness.store, log, pollMs: 100 });
  t.after(async () => {
    await bus.close();
    await harness.close();
  });
  const sessions = Array.from({ length: 50 }, () => newId());
  const received = firstEvents(bus, sessions.slice(0, 1), 6);
  const idle = firstEvents(bus, sessions.slice(1), 1);
  await new Promise((r) => setTimeout(r, 300)); // replay reads and the first poll done
  const queries = countQueries(harness.store);
  await new Promise((r) => setTimeout(r, 1000));
  const idleQueries = queries.texts.length;
  // 50 watched sessions: ~10 polls in 1 s; one poll per feed would be ~500 queries.
  assert.ok(idleQueries >= 5 && idleQueries <= 15, `${idleQueries} queries in 1 s idle (expected ~10)`);
  assert.ok(
    queries.texts.every((q) => /max\(sequence\)/.test(q)),
    'only tail polls while idle',
  );

  await raceChildren(t, { ...harness.childEnv!, SESSION_ID: sessions[0]!, COUNT: '6', CONCURRENCY: '1' }, ['other']);
  const events = await within(received[0]!, 5000, "the feed to get the other process's events");
  assert.deepEqual(
    events.map((e) => [e.sequence, e.data['worker']]),
    [1, 2, 3, 4, 5, 6].map((s) => [s, 'other']),
  );
  // Only the session whose tail moved was re-read.
  const readSessions = queries.texts.flatMap((q, i) =>
    /^select body from bus_events where session_id = \? and sequence >/.test(q) ? [queries.params[i]![0]] : [],
  );
  assert.ok(readSessions.length >= 1, 'the log was read after the foreign appends');
  assert.deepEqual(new Set(readSessions), new Set([sessions[0]]), 'no other session was read');
  for (const p of idle) void p.catch(() => undefined);
});

test("local on PostgreSQL - concurrent appends to many sessions share statements; a failed expectation stays that session's", async (t) => {
  const harness = await localHarness(await createTestDatabase('bus_group'));
  t.after(() => harness.close());
  const bus = await harness.connect();
  const sessions = Array.from({ length: 100 }, () => newId());
  await bus.events.append(sessions[0]!, [{ type: 'first' }]);
  const queries = countQueries(harness.store);
  const results = await Promise.all(
    sessions.map((sid, i) =>
      bus.events.append(
        sid,
        [
          { type: 'a', data: { i } },
          { type: 'b', data: { i } },
        ],
        { expectedSequence: 0 },
      ),
    ),
  );
  const inserts = queries.texts.filter((q) => /insert into bus_events/.test(q)).length;
  assert.ok(inserts <= 10, `${inserts} INSERT statements for 100 sessions (grouped)`);
  assert.deepEqual(results[0], { ok: false, currentSequence: 1 }, 'the session that had an event reports its tail');
  for (const [i, r] of results.entries()) {
    if (i === 0) continue;
    assert.ok(r.ok, `session ${i} appended`);
    assert.deepEqual(
      r.events.map((e) => [e.sequence, e.type, e.data['i']]),
      [
        [1, 'a', i],
        [2, 'b', i],
      ],
    );
    assert.deepEqual(
      (await bus.events.read(sessions[i]!)).map((e) => e.id),
      r.events.map((e) => e.id),
      'stored as returned',
    );
  }
  assert.deepEqual(
    (await bus.events.read(sessions[0]!)).map((e) => e.type),
    ['first'],
  );
});

test("local on PGlite - a turn's fence checks, the tail and reads of recent events run no statement; a lost claim still reads as lost", async (t) => {
  const harness = await localHarness();
  t.after(() => harness.close());
  const [bus, other] = [await harness.connect(), await harness.connect()];
  const sid = newId();
  const appended = await bus.events.append(sid, [{ type: 'a' }, { type: 'b' }]);
  assert.ok(appended.ok);
  await bus.turns.enqueue({ session_id: sid, turn_id: newId(), job: {} });
  const claim = await bus.turns.claim('w1', { waitMs: 1000 });
  assert.ok(claim);

  const queries = countQueries(harness.store);
  assert.equal(await bus.events.lastSequence(sid), 2);
  assert.equal(await other.events.lastSequence(sid), 2, 'a second bus on the store knows the tail too');
  assert.deepEqual(await bus.events.read(sid, { afterSequence: 2 }), []);
  assert.deepEqual(await bus.events.read(sid), appended.events);
  assert.deepEqual(
    (await other.events.read(sid, { afterSequence: 1 })).map((e) => [e.sequence, e.type]),
    [[2, 'b']],
  );
  assert.deepEqual(
    (await bus.events.read(sid, { limit: 1 })).map((e) => e.type),
    ['a'],
  );
  assert.equal(await claim.isCurrent(), true);
  assert.equal(await claim.isCurrent(), true);
  assert.deepEqual(queries.texts, [], 'no statement for the tail, reads of recent events or the fence checks');

  // An append through the other bus moves the tail for both; past what is kept, reads go to the table.
  await other.events.append(
    sid,
    Array.from({ length: 20 }, (_, i) => ({ type: 'c', data: { i } })),
  );
  assert.equal(await bus.events.lastSequence(sid), 22);
  assert.deepEqual(
    (await bus.events.read(sid, { afterSequence: 20 })).map((e) => e.data['i']),
    [18, 19],
  );
  const before = queries.texts.length;
  const all = await bus.events.read(sid);
  assert.equal(queries.texts.length, before + 1, 'the whole log is read from the table');
  assert.deepEqual(
    all.map((e) => e.sequence),
    Array.from({ length: 22 }, (_, i) => i + 1),
  );

  // The lease runs out and the other bus claims the turn: the first claim is fenced.
  await new Promise((r) => setTimeout(r, LEASE_MS + 100));
  const taken = await other.turns.claim('w2', { waitMs: 1000 });
  assert.ok(taken);
  assert.equal(await claim.isCurrent(), false);
  assert.equal(await taken.isCurrent(), true);
  await taken.ack();
  assert.equal(await taken.isCurrent(), false, 'an acked claim is no longer current');
});

test('local - an enqueued turn wakes one idle claimer: one claim statement, not one per waiting worker', async (t) => {
  const harness = await localHarness();
  // Polls a minute apart: a claim that comes within the test's time came from a wake-up.
  const bus = await createBus({ kind: 'local', store: harness.store, log, leaseMs: LEASE_MS, claimPollMs: 60_000 });
  t.after(async () => {
    await bus.close();
    await harness.close();
  });
  const stop = new AbortController();
  const got: TurnClaim[] = [];
  const claimers = Array.from({ length: 8 }, (_, i) =>
    bus.turns.claim(`w${i}`, { waitMs: 120_000, signal: stop.signal }).then((c) => c && got.push(c)),
  );
  await new Promise((r) => setTimeout(r, 1000)); // every claimer found nothing and waits
  const queries = countQueries(harness.store);
  const sessions = Array.from({ length: 3 }, () => newId());
  for (const sid of sessions) await bus.turns.enqueue({ session_id: sid, turn_id: newId(), job: {} });
  await within(
    until(() => got.length === 3),
    5000,
    'three waiters to get the three turns',
  );
  assert.deepEqual(got.map((c) => c.turn.session_id).sort(), [...sessions].sort());
  const claims = queries.texts.filter((q) => /^update bus_turns set claimed_by/.test(q)).length;
  assert.equal(claims, 3, 'one claim statement per enqueued turn');
  // Stopped claimers leave the waiters: the next wake-up goes to one still waiting, not to them.
  const sid = newId();
  const next = bus.turns.claim('late', { waitMs: 120_000 });
  await new Promise((r) => setTimeout(r, 500));
  stop.abort();
  await Promise.all(claimers);
  assert.equal(got.length, 3, 'stopped claimers claim nothing');
  await bus.turns.enqueue({ session_id: sid, turn_id: newId(), job: {} });
  const late = await within(next, 5000, 'the remaining waiter to be woken');
  assert.equal(late?.turn.session_id, sid);
});

/** Resolves once `done()` holds (checked every 10 ms). */
async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((r) => setTimeout(r, 10));
}
