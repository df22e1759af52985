/**
 * Issue 13, NATS node loss (bench/README.md, "Third run"): a tool that answered is recorded with
 * its result exactly once, never as "interrupted", and turns hit by the outage are retried
 * promptly. On a real 3-node JetStream cluster; a bus decorator plays what a node loss does to
 * one worker (its NATS requests answer "no responders" while a stream elects a leader, its
 * heartbeats are lost so its lease runs out and a later delivery takes the turn over).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { NoRespondersError } from '@nats-io/transport-node';
import type { NewSessionEvent, SessionEvent } from '../../schemas/events.js';
import type { AppendOptions, Bus, ClaimOptions, EventLog, TurnClaim, TurnQueue } from '../../src/bus/ports.js';
import { INTERRUPTED_TOOL_ERROR } from '../../src/turns/turn-events.js';
import type { RetryPolicy } from '../../src/retry/index.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { startNatsCluster } from '../helpers/nats-server.js';
import { assertLogIntegrity, createSession, sendMessage, waitForEvent, type StoredEvent } from './helpers.js';
import { LOCAL_WEB_FETCH, LOCAL_WEB_FETCH_ENV, startSlowServer, type SlowServer } from './slow-server.js';
import { dataOf } from '../helpers/raw-log.js';

/** A short lease, so a lost one runs out within the test. */
const LEASE_MS = 1_000;
/** A worker's retries of an append with an unknown outcome: 4 s of 100 ms pauses. */
const APPEND_RETRY: RetryPolicy = {
  name: 'test-append',
  maxAttempts: 41,
  deadlineMs: 4_000,
  backoff: { firstMs: 100, growth: 'constant', maxMs: 100, jitter: 'none' },
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const outageError = (subject: string) => new NoRespondersError(subject);

function deferred(): { promise: Promise<void>; resolve: () => void; done: boolean } {
  let resolve!: () => void;
  const d = { promise: new Promise<void>((r) => (resolve = r)), resolve: () => ((d.done = true), resolve()), done: false };
  return d;
}

const toolResult = (events: readonly NewSessionEvent[]) => events.find((e) => e.type === 'tool.completed');
const succeeded = (e: NewSessionEvent | undefined) => dataOf(e)['success'] === true;

function withClaims(bus: Bus<SessionEvent>, wrap: (claim: TurnClaim) => TurnClaim): Bus<SessionEvent> {
  const claim = async (workerId: string, opts?: ClaimOptions) => {
    const c = await bus.turns.claim(workerId, opts);
    return c && wrap(c);
  };
  return { ...bus, turns: Object.assign(Object.create(bus.turns) as TurnQueue, { claim }) };
}

/** The first delivery's heartbeats are lost (its consumer leader died): its lease runs out; `onTakeover` hears of each later delivery. */
function firstLeaseLost(bus: Bus<SessionEvent>, onTakeover: () => void): Bus<SessionEvent> {
  return withClaims(bus, (claim) => {
    if (claim.deliveryCount > 1) onTakeover();
    return claim.deliveryCount === 1 ? { ...claim, heartbeat: async () => undefined } : claim;
  });
}

function withAppend(
  bus: Bus<SessionEvent>,
  append: (
    log: EventLog<SessionEvent>,
    sessionId: string,
    events: NewSessionEvent[],
    opts?: AppendOptions,
  ) => ReturnType<EventLog<SessionEvent>['append']>,
): Bus<SessionEvent> {
  const log = bus.events;
  const wrapped = (sessionId: string, events: NewSessionEvent[], opts?: AppendOptions) => append(log, sessionId, events, opts);
  return { ...bus, events: Object.assign(Object.create(log) as EventLog<SessionEvent>, { append: wrapped }) };
}

async function toolTurn(app: TestApp, server: SlowServer, key: string): Promise<StoredEvent[]> {
  const { id } = await createSession(app, { capabilities: [LOCAL_WEB_FETCH] });
  const r = await sendMessage(app, id, `@tool fetch_url {"url":"${server.url}/slow?ms=300&id=${key}"}`);
  assert.equal(r.status, 201, r.text);
  return waitForEvent(app, id, 'session.idled', { timeoutMs: 30_000 });
}

/** The call answered once, and its one result is that answer. */
function assertRecordedOnce(events: StoredEvent[], server: SlowServer, key: string): void {
  const results = events.filter((e) => e.type === 'tool.completed');
  assert.deepEqual(
    results.map((e) => (dataOf(e)['success'] ? 'ok' : dataOf(e)['error'])),
    ['ok'],
    `one result, the tool's answer; log: ${events.map((e) => e.type).join(', ')}`,
  );
  assert.equal(server.hits.get(key), 1, 'the tool ran once');
  const [act] = events.filter((e) => e.type === 'act.completed');
  assert.deepEqual([dataOf(act)['succeeded'], dataOf(act)['failed']], [1, 0]);
  assert.equal(events.filter((e) => e.type === 'turn.completed').length, 1, 'the turn completed');
  assertLogIntegrity(events);
}

describe('a NATS node loss during a tool call (issue 13)', () => {
  let server: SlowServer;
  before(async () => {
    server = await startSlowServer();
  });
  after(() => server?.close());

  /** An app on a fresh 3-node cluster (every stream at 3 replicas). */
  const start = async (
    t: { after(fn: () => unknown): void },
    wrapBus: (bus: Bus<SessionEvent>) => Bus<SessionEvent>,
    appendRetry = APPEND_RETRY,
  ) => {
    const cluster = await startNatsCluster(3, { t });
    return startTestApp(t, {
      mode: 'nats',
      natsUrl: cluster.url,
      env: { ...LOCAL_WEB_FETCH_ENV, TURN_CLAIM_TIMEOUT_MS: LEASE_MS },
      appOptions: { wrapBus, turnRunner: { appendRetry } },
    });
  };

  it('a result in hand when the lease ran out is handed over to the next attempt, not recorded "interrupted"', async (t) => {
    const takenOver = deferred();
    const handedOver = deferred();
    const app = await start(t, (bus) =>
      withAppend(firstLeaseLost(bus, takenOver.resolve), async (log, sessionId, events, opts) => {
        const result = toolResult(events);
        // The first worker's result cannot be stored until another delivery took the turn over.
        if (succeeded(result) && !takenOver.done) throw outageError(`evt.0.${sessionId}`);
        // The successor's "interrupted" goes out after the handover (or 5 s later without one).
        if (result && !succeeded(result)) await Promise.race([handedOver.promise, sleep(5_000)]);
        const stored = await log.append(sessionId, events, opts);
        if (succeeded(result) && stored.ok) handedOver.resolve();
        return stored;
      }),
    );
    const events = await toolTurn(app, server, 'lease');
    assert.ok(takenOver.done, 'a later delivery took the turn over');
    assert.ok(!events.some((e) => dataOf(e)['error'] === INTERRUPTED_TOOL_ERROR), 'nothing recorded as interrupted');
    assertRecordedOnce(events, server, 'lease');
  });

  it('a takeover from a live worker waits for its handed-over result instead of racing it with "interrupted"', async (t) => {
    const takenOver = deferred();
    let takenOverAt = 0;
    const app = await start(t, (bus) =>
      withAppend(
        firstLeaseLost(bus, () => {
          if (takenOver.done) return;
          takenOverAt = Date.now();
          takenOver.resolve();
        }),
        async (log, sessionId, events, opts) => {
          // The first worker's stream comes back 400 ms after the takeover (its 1 s resends);
          // the successor's own appends are not held back: it decides as soon as it has read.
          if (succeeded(toolResult(events)) && (!takenOver.done || Date.now() < takenOverAt + 400)) {
            throw outageError(`evt.0.${sessionId}`);
          }
          return log.append(sessionId, events, opts);
        },
      ),
    );
    const events = await toolTurn(app, server, 'race');
    assert.ok(takenOver.done, 'a later delivery took the turn over');
    assert.ok(
      !events.some((e) => dataOf(e)['error'] === INTERRUPTED_TOOL_ERROR),
      `nothing recorded as interrupted: ${events.map((e) => `${e.type}@${e.ts.slice(17, 23)}`).join(', ')} (taken over ${new Date(takenOverAt).toISOString().slice(17, 23)})`,
    );
    assertRecordedOnce(events, server, 'race');
  });

  it('a start that lands between a takeover and its own start is not doubled: the tool runs once (decision 0110)', async (t) => {
    const takenOver = deferred();
    const firstLanded = deferred();
    let releaseFirst: (() => void) | undefined;
    let starts = 0;
    const app = await start(t, (bus) =>
      withAppend(firstLeaseLost(bus, takenOver.resolve), async (log, sessionId, events, opts) => {
        if (!events.some((e) => e.type === 'tool.started')) return log.append(sessionId, events, opts);
        if (++starts === 1) {
          // The first delivery passed its claim check; its start is held in flight (a frozen
          // node) until the successor has read the log and sends its own start.
          await new Promise<void>((r) => (releaseFirst = r));
          const stored = await log.append(sessionId, events, opts);
          firstLanded.resolve();
          return stored;
        }
        if (releaseFirst) {
          releaseFirst();
          releaseFirst = undefined;
          await firstLanded.promise;
        }
        return log.append(sessionId, events, opts);
      }),
    );
    const events = await toolTurn(app, server, 'double-start');
    assert.ok(takenOver.done, 'a later delivery took the turn over');
    assert.ok(firstLanded.done, "the first delivery's start landed after the successor read the log");
    assert.equal(server.hits.get('double-start'), 1, 'the tool ran once');
    assert.equal(events.filter((e) => e.type === 'tool.started').length, 1, 'one start stored');
    assert.equal(events.filter((e) => e.type === 'tool.completed').length, 1, 'one result');
    assert.equal(events.filter((e) => e.type === 'turn.completed').length, 1, 'the turn completed');
    assertLogIntegrity(events);
  });

  it('the claim check before storing a result rides through an election of the claims bucket', async (t) => {
    let outageUntil = 0;
    const inOutage = () => Date.now() < outageUntil;
    const app = await start(t, (bus) =>
      withAppend(
        withClaims(bus, (claim) => ({
          ...claim,
          isCurrent: async () => {
            if (inOutage()) throw outageError('$JS.API.STREAM.MSG.GET.KV_turn_claims');
            return claim.isCurrent();
          },
        })),
        async (log, sessionId, events, opts) => {
          if (inOutage()) throw outageError(`evt.0.${sessionId}`);
          const stored = await log.append(sessionId, events, opts);
          // The node dies while the tool runs; its streams have new leaders 700 ms later.
          if (events.some((e) => e.type === 'tool.started') && stored.ok) outageUntil = Date.now() + 700;
          return stored;
        },
      ),
    );
    const events = await toolTurn(app, server, 'check');
    assert.ok(outageUntil > 0, 'the outage happened');
    assertRecordedOnce(events, server, 'check');
  });

  it('an attempt that failed because the bus was unreachable is retried within 500 ms, not after a growing backoff', async (t) => {
    const naks: number[] = [];
    let failures = 0;
    const app = await start(
      t,
      (bus) =>
        withAppend(
          withClaims(bus, (claim) => ({
            ...claim,
            nak: (delayMs?: number) => {
              naks.push(delayMs ?? 0);
              return claim.nak(delayMs);
            },
          })),
          async (log, sessionId, events, opts) => {
            // Three attempts in a row meet a stream without a leader when they start the reason step.
            if (events.some((e) => e.type === 'reason.started') && failures < 3) {
              failures++;
              throw outageError(`evt.0.${sessionId}`);
            }
            return log.append(sessionId, events, opts);
          },
        ),
      { ...APPEND_RETRY, maxAttempts: 1 }, // no retries within the attempt here: each outage ends the attempt
    );
    const { id } = await createSession(app);
    assert.equal((await sendMessage(app, id, 'hello')).status, 201);
    const events = await waitForEvent(app, id, 'session.idled', { timeoutMs: 30_000 });
    assert.equal(failures, 3, 'three attempts met the outage');
    assert.equal(events.filter((e) => e.type === 'turn.completed').length, 1, 'the turn completed');
    assert.ok(naks.length >= 3, `the failed attempts were given back: ${JSON.stringify(naks)}`);
    assert.ok(
      naks.every((ms) => ms <= 500),
      `each retry after an outage comes within 500 ms: ${JSON.stringify(naks)}`,
    );
    assertLogIntegrity(events);
  });
});
