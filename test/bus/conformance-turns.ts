import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Bus, Signal, TurnJob, LoggedEvent } from '../../src/bus/index.js';
import { SessionBusyError } from '../../src/errors.js';
import { newId } from '../../src/ids.js';
import type { ConformanceContext } from './conformance.js';
import { within } from './conformance-events.js';

function turn(sessionId = newId()): TurnJob {
  return { session_id: sessionId, turn_id: newId(), job: { input: 'hello' } };
}

/** Claims until `total` turns were seen or the queue stays empty; acks each one. */
async function drain(bus: Bus<LoggedEvent>, worker: string, seen: Map<string, string[]>, total: number): Promise<void> {
  while ([...seen.values()].reduce((n, w) => n + w.length, 0) < total) {
    const claim = await bus.turns.claim(worker, { waitMs: 1000 });
    if (!claim) return;
    const list = seen.get(claim.turn.turn_id) ?? [];
    list.push(`${worker}#${claim.deliveryCount}`);
    seen.set(claim.turn.turn_id, list);
    await claim.ack();
  }
}

export function defineTurnQueueCases(ctx: ConformanceContext): void {
  const { it } = ctx;

  it('enqueue - a second turn for a busy session is refused; the same turn again is a no-op', async () => {
    const first = turn();
    await ctx.bus.turns.enqueue(first);
    await ctx.bus.turns.enqueue(first);
    await assert.rejects(ctx.bus.turns.enqueue(turn(first.session_id)), SessionBusyError);
    assert.equal(await ctx.bus.turns.queued(first.session_id), first.turn_id);
    const claim = await ctx.bus.turns.claim('w1');
    assert.deepEqual(claim?.turn, first);
    // Still busy while the turn runs.
    await assert.rejects(ctx.bus.turns.enqueue(turn(first.session_id)), SessionBusyError);
    assert.equal(await ctx.bus.turns.queued(first.session_id), first.turn_id, 'running counts as queued');
    await claim!.ack();
    assert.equal(await ctx.bus.turns.queued(first.session_id), null);
    const next = turn(first.session_id);
    await ctx.bus.turns.enqueue(next);
    await ctx.bus.turns.remove(first.session_id);
    assert.equal(await ctx.bus.turns.queued(first.session_id), null);
  });

  it('removeFinished - drops only the named turn’s job; its worker’s late ack leaves the next turn alone', async () => {
    const finished = turn();
    await ctx.bus.turns.enqueue(finished);
    const claim = await ctx.bus.turns.claim('w-slow', { waitMs: 3000 });
    assert.equal(claim?.turn.turn_id, finished.turn_id);
    assert.equal(await ctx.bus.turns.removeFinished(finished.session_id, newId()), false, 'another turn’s job stays');
    assert.equal(await ctx.bus.turns.queued(finished.session_id), finished.turn_id);
    assert.equal(await ctx.bus.turns.removeFinished(finished.session_id, finished.turn_id), true);
    assert.equal(await ctx.bus.turns.queued(finished.session_id), null);
    const next = turn(finished.session_id);
    await ctx.bus.turns.enqueue(next);
    const taken = await ctx.bus.turns.claim('w-next', { waitMs: 3000 });
    assert.equal(taken?.turn.turn_id, next.turn_id);
    await claim!.ack(); // the finished turn's ack, late: must not remove the next turn's job
    assert.equal(await ctx.bus.turns.queued(finished.session_id), next.turn_id, 'the next turn’s job stays');
    assert.equal(await taken.isCurrent(), true);
    assert.equal(await ctx.bus.turns.removeFinished(finished.session_id, finished.turn_id), false);
    await taken.ack();
    assert.equal(await ctx.bus.turns.queued(finished.session_id), null);
    assert.equal(await ctx.bus.turns.removeFinished(finished.session_id, next.turn_id), true, 'nothing queued');
  });

  it('claim - returns null after waitMs when nothing is queued, or at once when aborted', async () => {
    const started = Date.now();
    assert.equal(await ctx.bus.turns.claim('w1', { waitMs: 300 }), null);
    assert.ok(Date.now() - started < 5000);
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 50);
    const t0 = Date.now();
    assert.equal(await ctx.bus.turns.claim('w1', { waitMs: 3000, signal: ac.signal }), null);
    assert.ok(Date.now() - t0 < 2000, 'abort ends the wait');
  });

  it('3 workers claiming 500 turns - each turn is claimed exactly once', async (t) => {
    const workers = [ctx.bus, await ctx.harness.connect(), await ctx.harness.connect()];
    const turns = Array.from({ length: 500 }, () => turn());
    const started = performance.now();
    for (let i = 0; i < turns.length; i += 50) await Promise.all(turns.slice(i, i + 50).map((x) => ctx.bus.turns.enqueue(x)));
    const seen = new Map<string, string[]>();
    await Promise.all(workers.map((bus, i) => drain(bus, `w${i + 1}`, seen, turns.length)));
    const ms = performance.now() - started;
    assert.equal(seen.size, turns.length, 'every turn was claimed');
    for (const x of turns) assert.equal(seen.get(x.turn_id)?.length, 1, `turn ${x.turn_id} claimed by ${seen.get(x.turn_id)}`);
    const perWorker = workers.map((_, i) => [...seen.values()].filter((w) => w[0]!.startsWith(`w${i + 1}#`)).length);
    t.diagnostic(`500 turns enqueued + claimed + acked by 3 workers in ${ms.toFixed(0)} ms; per worker ${perWorker.join('/')}`);
  });

  it('an unacked claim is redelivered to another worker, and the stale worker is fenced', async () => {
    const job = turn();
    await ctx.bus.turns.enqueue(job);
    const stale = await ctx.bus.turns.claim('w-stale', { waitMs: 3000 });
    assert.equal(stale?.turn.turn_id, job.turn_id);
    assert.equal(stale.deliveryCount, 1);
    assert.equal(await stale.isCurrent(), true);
    const other = await ctx.harness.connect();
    const taken = await other.turns.claim('w-new', { waitMs: ctx.harness.leaseMs * 4 });
    assert.equal(taken?.turn.turn_id, job.turn_id, 'redelivered after the lease ran out');
    assert.equal(taken.deliveryCount, 2);
    assert.equal(await stale.isCurrent(), false);
    assert.equal(await taken.isCurrent(), true);
    await stale.ack(); // must not release the new worker's turn
    assert.equal(await ctx.bus.turns.queued(job.session_id), job.turn_id);
    assert.equal(await taken.isCurrent(), true);
    await taken.ack();
    assert.equal(await ctx.bus.turns.queued(job.session_id), null);
  });

  it('heartbeat keeps a claim past its lease', async () => {
    const job = turn();
    await ctx.bus.turns.enqueue(job);
    const claim = await ctx.bus.turns.claim('w1', { waitMs: 3000 });
    assert.ok(claim);
    const other = await ctx.harness.connect();
    const rival = other.turns.claim('w2', { waitMs: ctx.harness.leaseMs * 2 });
    const beats = (async () => {
      for (let i = 0; i < 8; i++) {
        await sleep(ctx.harness.leaseMs / 4);
        await claim.heartbeat();
      }
    })();
    assert.equal(await rival, null, 'no redelivery while heartbeating');
    await beats;
    assert.equal(await claim.isCurrent(), true);
    await claim.ack();
  });

  it('nak(delayMs) gives the turn back, available again after the delay', async () => {
    const job = turn();
    await ctx.bus.turns.enqueue(job);
    const claim = await ctx.bus.turns.claim('w1', { waitMs: 3000 });
    assert.ok(claim);
    const nakedAt = Date.now();
    await claim.nak(500);
    const again = await ctx.bus.turns.claim('w2', { waitMs: 5000 });
    assert.equal(again?.turn.turn_id, job.turn_id);
    assert.ok(Date.now() - nakedAt >= 400, `redelivered after ${Date.now() - nakedAt} ms`);
    assert.equal(again.deliveryCount, 2);
    await again.ack();
    assert.equal(await ctx.bus.turns.queued(job.session_id), null);
  });
}

export function defineSignalCases(ctx: ConformanceContext): void {
  ctx.it('signals - reach subscribers of that session only, until they unsubscribe', async () => {
    const [a, b] = [newId(), newId()];
    const got: Signal[] = [];
    const stopA = ctx.bus.signals.subscribe(a, (s) => got.push(s));
    const otherB: Signal[] = [];
    const stopB = ctx.bus.signals.subscribe(b, (s) => otherB.push(s));
    await ctx.bus.ping(); // the subscriptions are registered server-side once a round trip completes
    const sender = ctx.bus; // local signals are process-local: send on the same bus
    await sender.signals.send({ type: 'cancel', session_id: a, turn_id: newId() });
    await sender.signals.send({ type: 'tool_results', session_id: a });
    await within(
      (async () => {
        while (got.length < 2) await sleep(10);
      })(),
      5000,
      'signals to arrive',
    );
    assert.deepEqual(
      got.map((s) => s.type),
      ['cancel', 'tool_results'],
    );
    assert.deepEqual(otherB, []);
    stopA();
    stopB();
    await ctx.bus.ping();
    await sender.signals.send({ type: 'deleted', session_id: a });
    await sleep(100);
    assert.equal(got.length, 2);
  });

  ctx.it('signals - a subscription by type gets that type for every session, no other type, until it stops', async () => {
    const [a, b] = [newId(), newId()];
    const got: Signal[] = [];
    const stop = ctx.bus.signals.subscribeType('deleted', (s) => got.push(s));
    await ctx.bus.ping();
    await ctx.bus.signals.send({ type: 'cancel', session_id: a, turn_id: newId() });
    await ctx.bus.signals.send({ type: 'deleted', session_id: a });
    await ctx.bus.signals.send({ type: 'deleted', session_id: b });
    await within(
      (async () => {
        while (got.length < 2) await sleep(10);
      })(),
      5000,
      'deletions to arrive',
    );
    assert.deepEqual(
      got.map((s) => [s.type, s.session_id]),
      [
        ['deleted', a],
        ['deleted', b],
      ],
    );
    stop();
    await ctx.bus.ping();
    await ctx.bus.signals.send({ type: 'deleted', session_id: b });
    await sleep(100);
    assert.equal(got.length, 2, 'nothing after stop');
  });
}
