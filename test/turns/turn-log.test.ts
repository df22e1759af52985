import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StaleDecisionError, TurnStoppedError } from '../../src/turns/turn-errors.js';
import { turnEvents, ZERO_USAGE, type TurnRef } from '../../src/turns/turn-events.js';
import { TurnLog } from '../../actors/session/log/turn-log.js';
import type { NewSessionEvent, SessionEvent } from '../../schemas/events.js';
import type { AppendOptions, AppendResult, EventLog } from '../../src/bus/ports.js';
import type { RetryPolicy } from '../../src/retry/index.js';

const turn: TurnRef = { turn_id: 'turn-1', input_message_id: 'msg-1' };

/** An append retry of equal pauses, for tries counted by the test. */
function testRetry(o: { maxAttempts: number; pauseMs: number; deadlineMs: number }): RetryPolicy {
  return {
    name: 'test-append',
    maxAttempts: o.maxAttempts,
    deadlineMs: o.deadlineMs,
    backoff: { firstMs: o.pauseMs, growth: 'constant', maxMs: o.pauseMs, jitter: 'none' },
  };
}

/** An in-memory EventLog<SessionEvent> with the port's semantics (contiguous sequence, dedup by id, expectedSequence). */
function memoryLog() {
  const events: SessionEvent[] = [];
  let appends = 0;
  const log: EventLog<SessionEvent> = {
    async append(sessionId: string, input: NewSessionEvent[], opts: AppendOptions = {}): Promise<AppendResult<SessionEvent>> {
      appends++;
      const fresh = input.filter((e) => !events.some((x) => x.id === e.id));
      if (fresh.length && opts.expectedSequence !== undefined && opts.expectedSequence !== events.length)
        return { ok: false, currentSequence: events.length };
      for (const e of fresh) {
        events.push({
          ...e,
          id: e.id ?? `auto${events.length}`,
          ts: new Date().toISOString(),
          session_id: sessionId,
          sequence: events.length + 1,
          context: e.context ?? {},
        });
      }
      return { ok: true, events: input.map((e) => events.find((x) => x.id === e.id)!) };
    },
    async read(_s, { afterSequence = 0, limit = 1000 } = {}) {
      return events.filter((e) => e.sequence > afterSequence).slice(0, limit);
    },
    async findById(_s, id) {
      return events.find((e) => e.id === id) ?? null;
    },
    async lastSequence() {
      return events.length;
    },
    subscribe() {
      throw new Error('not used');
    },
    follow() {
      throw new Error('not used');
    },
    async purge() {},
  };
  return { log, events, appends: () => appends };
}

const started = () => [turnEvents.turnStarted('turn-1', turn), turnEvents.sessionActivated('act', turn)];
let n = 0;
const reason = (i = 1) => turnEvents.reasonStarted(`r${++n}`, turn, i);

describe('turn log', () => {
  it('push is optimistic (state moves at once) and group-commits what queues up during an append', async () => {
    const mem = memoryLog();
    const tl = await TurnLog.open({ events: mem.log, claim: { isCurrent: async () => true }, sessionId: 's', turn });
    tl.push(started());
    assert.equal(tl.state.hasTurnStarted, true);
    for (let i = 0; i < 5; i++) tl.push([reason(i + 1)]);
    assert.equal(tl.state.steps.length, 5);
    await tl.flush();
    assert.equal(mem.events.length, 7);
    assert.deepEqual(
      mem.events.map((e) => e.sequence),
      [1, 2, 3, 4, 5, 6, 7],
    );
    assert.ok(mem.appends() <= 2, `${mem.appends()} appends`);
    assert.equal(tl.folded().transcript.sequence, 7);
  });

  it("another writer's events are folded before ours and our events are retried after them, once each", async () => {
    const mem = memoryLog();
    let cancelled = false;
    const tl = await TurnLog.open({
      events: mem.log,
      claim: { isCurrent: async () => true },
      sessionId: 's',
      turn,
      onFolded: (s) => (cancelled ||= s.cancelled),
    });
    await tl.commit(started());
    // The API appends a cancel behind the worker's back.
    await mem.log.append('s', [turnEvents.turnCancelled('cancel', turn, ZERO_USAGE)]);
    await tl.commit([reason()]);
    assert.deepEqual(
      mem.events.map((e) => e.type),
      ['turn.started', 'session.activated', 'turn.cancelled', 'reason.started'],
    );
    assert.ok(cancelled, 'onFolded saw the cancel');
    assert.equal(tl.state.cancelled, true);
    assert.equal(tl.state.steps.length, 1);
  });

  it('a tool call another attempt started meanwhile is not started again: the batch is dropped and the attempt decides again', async () => {
    const mem = memoryLog();
    const tl = await TurnLog.open({ events: mem.log, claim: { isCurrent: async () => true }, sessionId: 's', turn });
    await tl.commit([...started(), reason()]);
    const call = { id: 'call-1', name: 'fetch_url', arguments: {} };
    // The other delivery passed its claim check before this one claimed, and its start landed
    // after this one read the log: the log's order is all that tells them apart.
    await mem.log.append('s', [turnEvents.toolStarted('theirs', turn, 'exec-theirs', call, call.name)]);
    await assert.rejects(tl.commit([turnEvents.toolStarted('ours', turn, 'exec-ours', call, call.name)]), StaleDecisionError);
    assert.deepEqual(
      mem.events.filter((e) => e.type === 'tool.started').map((e) => e.id),
      ['theirs'],
      'one start: the tool runs once',
    );
    assert.equal(tl.dropUnappended(), true);
    assert.equal(tl.state.steps.at(-1)?.started.get(call.id), 'exec-theirs', 'the next decision sees their start');
    await tl.commit([reason(2)]);
    assert.equal(mem.events.at(-1)?.type, 'reason.started', 'appends go on after the drop');
  });

  it('a lost claim stops every later append (sticky), and nothing is written', async () => {
    const mem = memoryLog();
    let current = true;
    const tl = await TurnLog.open({ events: mem.log, claim: { isCurrent: async () => current }, sessionId: 's', turn });
    await tl.commit(started());
    current = false;
    await assert.rejects(tl.commit([reason()]), TurnStoppedError);
    assert.throws(() => tl.push([reason()]), TurnStoppedError);
    await assert.rejects(tl.flush(), TurnStoppedError);
    assert.equal(mem.events.length, 2);
    assert.ok(tl.failure instanceof TurnStoppedError);
  });

  it('the fence check of a burst starts with its first event; nothing is appended before its answer', async () => {
    const mem = memoryLog();
    const answers: ((current: boolean) => void)[] = [];
    const claim = { isCurrent: () => new Promise<boolean>((resolve) => answers.push(resolve)) };
    const tl = await TurnLog.open({ events: mem.log, claim, sessionId: 's', turn });
    tl.push(started());
    assert.equal(answers.length, 1, 'asked at once, with the first event');
    tl.push([reason()]);
    const stored = tl.flush();
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(mem.appends(), 0, 'waits for the answer');
    answers[0]!(true);
    await stored;
    assert.equal(mem.events.length, 3, 'the burst went out as one append');
    assert.equal(mem.appends(), 1);
    const refused = tl.commit([reason()]);
    assert.equal(answers.length, 2, 'the next burst is checked again');
    answers[1]!(false);
    await assert.rejects(refused, TurnStoppedError);
    assert.equal(mem.events.length, 3);
  });

  it('opens from a cached fold and reads only what came after it', async () => {
    const mem = memoryLog();
    const first = await TurnLog.open({ events: mem.log, claim: { isCurrent: async () => true }, sessionId: 's', turn });
    await first.commit(started());
    const turn2: TurnRef = { turn_id: 'turn-2', input_message_id: 'msg-2' };
    await mem.log.append('s', [turnEvents.turnStarted('turn-2', turn2)]);
    let reads = 0;
    const counting: EventLog<SessionEvent> = { ...mem.log, read: (s, o) => (reads++, mem.log.read(s, o)) };
    const second = await TurnLog.open(
      { events: counting, claim: { isCurrent: async () => true }, sessionId: 's', turn: turn2 },
      first.folded(),
    );
    // A redelivered old turn opened on a newer cache is found again (turn.started's id is the turn id).
    const stale = await TurnLog.open(
      { events: mem.log, claim: { isCurrent: async () => true }, sessionId: 's', turn, mayPredateCache: true },
      second.folded(),
    );
    assert.equal(stale.state.hasTurnStarted, true);
    assert.equal(second.state.hasTurnStarted, true);
    assert.equal(second.folded().transcript.sequence, 3);
    assert.equal(reads, 1);
  });

  it('an append that stored only a prefix and failed: the rest goes out again under the same ids, after a pause', async () => {
    const mem = memoryLog();
    const sent: { ids: string[]; newIds: boolean | undefined }[] = [];
    let losses = 2;
    const lossy: EventLog<SessionEvent> = {
      ...mem.log,
      async append(s, input, opts) {
        sent.push({ ids: input.map((e) => e.id!), newIds: opts?.newIds });
        if (losses-- > 0) {
          await mem.log.append(s, input.slice(0, 1), opts);
          throw new Error('timed out');
        }
        return mem.log.append(s, input, opts);
      },
    };
    let checks = 0;
    const tl = await TurnLog.open({
      events: lossy,
      claim: { isCurrent: async () => (checks++, true) },
      sessionId: 's',
      turn,
      // Two short pauses for the two losses, under a deadline a loaded machine's late timers do not reach.
      appendRetry: testRetry({ maxAttempts: 3, pauseMs: 50, deadlineMs: 10_000 }),
    });
    await tl.commit([...started(), reason(), reason()]);
    assert.deepEqual(
      mem.events.map((e) => e.type),
      ['turn.started', 'session.activated', 'reason.started', 'reason.started'],
      'each event stored once, in order',
    );
    assert.deepEqual(
      sent.map((a) => a.ids.length),
      [4, 3, 2],
      'each retry sends only what the log lacks',
    );
    assert.deepEqual(
      sent.map((a) => a.newIds),
      [true, false, false],
      'a retried event may have been stored late: the log looks it up',
    );
    assert.equal(checks, 3, 'the claim is checked again before each retry');
    assert.equal(tl.folded().transcript.sequence, 4);
    assert.equal(tl.failure, null);
  });

  it('an append that keeps failing past the retries fails the attempt (sticky), with what was stored folded', async () => {
    const mem = memoryLog();
    const lossy: EventLog<SessionEvent> = {
      ...mem.log,
      async append(s, input, opts) {
        await mem.log.append(s, input.slice(0, 1), opts);
        throw new Error('stream unavailable');
      },
    };
    const tl = await TurnLog.open({
      events: lossy,
      claim: { isCurrent: async () => true },
      sessionId: 's',
      turn,
      appendRetry: testRetry({ maxAttempts: 2, pauseMs: 1, deadlineMs: 1_000 }),
    });
    await assert.rejects(tl.commit([...started(), reason()]), /stream unavailable/);
    assert.equal(mem.events.length, 2, 'one event per try');
    assert.throws(() => tl.push([reason()]), /stream unavailable/);
  });

  it("retries end once the pauses' total has passed since the first failure, however long each try took", async () => {
    const mem = memoryLog();
    let tries = 0;
    const slow: EventLog<SessionEvent> = {
      ...mem.log,
      async append() {
        tries++;
        // Each try runs into a timeout of its own (a request timeout, a wait for a copy).
        await new Promise((r) => setTimeout(r, 200));
        throw new Error('no answer in time');
      },
    };
    // 20 pauses of 25 ms under a 0.5 s deadline, but 20 tries of 200 ms would take 4.5 s.
    const tl = await TurnLog.open({
      events: slow,
      claim: { isCurrent: async () => true },
      sessionId: 's',
      turn,
      appendRetry: testRetry({ maxAttempts: 21, pauseMs: 25, deadlineMs: 500 }),
    });
    const t0 = Date.now();
    await assert.rejects(tl.commit(started()), /no answer in time/);
    const took = Date.now() - t0;
    assert.ok(took < 1_500, `gave up after ${took} ms`);
    assert.ok(tries >= 2 && tries <= 5, `${tries} tries`);
  });
});
