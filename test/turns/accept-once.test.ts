/**
 * Issue 13 items 1 and 8 (chaos defect 2), issue 32 item 1: a message is accepted once. A turn
 * whose first append was stored and reported failed runs once; a POST answered 5xx
 * has no effect, even when its job is stored after the answer (its turn is voided first), so the
 * client's retry, with or without the Idempotency-Key, is the one turn; a retry after the first
 * instance died before storing its outcome answers with the message that was accepted instead
 * of sending it again. Every case ends with one input.message and one turn.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { NewSessionEvent, SessionEvent } from '../../schemas/events.js';
import type { AppendOptions, Bus, EventLog, TurnJob, TurnQueue } from '../../src/bus/ports.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { assertLogIntegrity, createSession, listEvents, waitForEvent, type StoredEvent } from './helpers.js';

const ofType = (events: StoredEvent[], type: string) => events.filter((e) => e.type === type);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function postMessage(app: TestApp, sessionId: string, text: string, key: string) {
  return app.request('POST', `/v1/sessions/${sessionId}/messages`, {
    body: { message: { content: [{ type: 'text', text }] } },
    headers: { 'Idempotency-Key': key },
  });
}

/** The first append holding an input.message is stored and then reported failed (a publish ack lost). */
function lostAppendAck(bus: Bus<SessionEvent>, hits: string[][]): Bus<SessionEvent> {
  const log = bus.events;
  const append = async (sessionId: string, events: NewSessionEvent[], opts?: AppendOptions) => {
    const result = await log.append(sessionId, events, opts);
    if (hits.length === 0 && events.some((e) => e.type === 'input.message')) {
      hits.push(events.map((e) => e.type));
      throw new Error('publish timed out: no ack from the stream leader');
    }
    return result;
  };
  return { ...bus, events: Object.assign(Object.create(log) as EventLog<SessionEvent>, { append }) };
}

/** The first start job is queued and then reported failed, so the API answers 5xx although the turn will run. */
function lostEnqueueAck(bus: Bus<SessionEvent>, hits: TurnJob[]): Bus<SessionEvent> {
  const queue = bus.turns;
  const enqueue = async (job: TurnJob) => {
    await queue.enqueue(job);
    if (hits.length === 0 && job.job['kind'] === 'start') {
      hits.push(job);
      throw new Error('request timed out: the enqueue ack was lost');
    }
  };
  return { ...bus, turns: Object.assign(Object.create(queue) as TurnQueue, { enqueue }) };
}

/** How long after its failed answer the first start job is stored (a frozen stream leader waking up). */
const LATE_STORE_MS = 1_500;

/** The first start job times out at once and is stored LATE_STORE_MS later, as a publish still in flight is. */
function lateEnqueue(bus: Bus<SessionEvent>, late: Promise<void>[]): Bus<SessionEvent> {
  const queue = bus.turns;
  const enqueue = async (job: TurnJob) => {
    if (late.length === 0 && job.job['kind'] === 'start') {
      late.push(sleep(LATE_STORE_MS).then(() => queue.enqueue(job)));
      throw new Error('publish timed out: the stream leader did not answer');
    }
    return queue.enqueue(job);
  };
  return { ...bus, turns: Object.assign(Object.create(queue) as TurnQueue, { enqueue }) };
}

/** The first start job is refused before anything is stored (the queue is unreachable). */
function refusedEnqueue(bus: Bus<SessionEvent>, hits: TurnJob[]): Bus<SessionEvent> {
  const queue = bus.turns;
  const enqueue = async (job: TurnJob) => {
    if (hits.length === 0 && job.job['kind'] === 'start') {
      hits.push(job);
      throw new Error('connection closed');
    }
    return queue.enqueue(job);
  };
  return { ...bus, turns: Object.assign(Object.create(queue) as TurnQueue, { enqueue }) };
}

/** One input.message, one turn, a complete preamble and log. */
async function assertRanOnce(app: TestApp, sessionId: string, messageId?: string): Promise<void> {
  const events = await waitForEvent(app, sessionId, 'session.idled', { timeoutMs: 20_000 });
  await sleep(300); // a second turn, if one was queued, would start now
  const all = await listEvents(app, sessionId);
  const inputs = ofType(all, 'input.message');
  assert.equal(inputs.length, 1, `one input.message; log: ${all.map((e) => e.type).join(', ')}`);
  if (messageId) assert.equal(inputs[0]!.data['message'].id, messageId, 'the answer names the stored message');
  assert.equal(ofType(all, 'turn.started').length, 1, 'one turn');
  assert.equal(ofType(all, 'session.activated').length, 1, 'the preamble is complete');
  assertLogIntegrity(events);
}

for (const mode of ['postgres', 'nats'] as const) {
  describe(`a message is accepted once (${mode})`, () => {
    it('the worker’s preamble append fails after storing: the turn runs once, and a retry with the key replays the message', async (t) => {
      const hits: string[][] = [];
      const app = await startTestApp(t, { mode, appOptions: { wrapBus: (bus) => lostAppendAck(bus, hits) } });
      const { id } = await createSession(app);
      const key = randomUUID();
      const first = await postMessage(app, id, 'hello', key);
      assert.equal(first.status, 201, first.text);
      await assertRanOnce(app, id, first.body.id);
      assert.equal(hits.length, 1, 'the fault hit');
      assert.deepEqual(hits[0]!.slice(0, 4), ['input.message', 'session.started', 'turn.started', 'session.activated']);
      const again = await postMessage(app, id, 'hello', key);
      assert.deepEqual([again.status, again.body.id], [201, first.body.id], again.text);
      await assertRanOnce(app, id, first.body.id);
    });

    it('the enqueue fails after storing the job: the 5xx has no effect (the job is dropped), the retry with the key runs the message once', async (t) => {
      const hits: TurnJob[] = [];
      const app = await startTestApp(t, { mode, appOptions: { wrapBus: (bus) => lostEnqueueAck(bus, hits) } });
      const { id } = await createSession(app);
      const key = randomUUID();
      const first = await postMessage(app, id, 'hello', key);
      assert.equal(hits.length, 1, 'the fault hit');
      assert.ok(first.status >= 500, `the outcome is unknown to the API: ${first.status} ${first.text}`);
      // The client retries until it gets an answer that is not "busy" (the dropped job may still be queued).
      let again = await postMessage(app, id, 'hello', key);
      for (let i = 0; again.status === 409 && i < 200; i++) {
        await sleep(50);
        again = await postMessage(app, id, 'hello', key);
      }
      assert.equal(again.status, 201, again.text);
      await assertRanOnce(app, id, again.body.id);
    });

    it('a start job stored after its request was answered 5xx (a publish that timed out in flight) never runs; the retry runs once', async (t) => {
      const late: Promise<void>[] = [];
      const app = await startTestApp(t, { mode, appOptions: { wrapBus: (bus) => lateEnqueue(bus, late) } });
      const { id } = await createSession(app);
      const first = await postMessage(app, id, 'hello', randomUUID());
      assert.ok(first.status >= 500, `${first.status} ${first.text}`);
      await Promise.all(late); // the first job is stored now, after its 5xx
      await sleep(LATE_STORE_MS); // a worker has had time to claim (and drop) it
      const afterRefusal = await listEvents(app, id);
      assert.deepEqual(
        ofType(afterRefusal, 'input.message'),
        [],
        `the refused message left no trace: ${afterRefusal.map((e) => e.type).join(', ')}`,
      );
      // The client's retry (a new request: no Idempotency-Key) is the only turn.
      let again = await postMessage(app, id, 'hello', randomUUID());
      for (let i = 0; again.status === 409 && i < 200; i++) {
        await sleep(50);
        again = await postMessage(app, id, 'hello', randomUUID());
      }
      assert.equal(again.status, 201, again.text);
      await assertRanOnce(app, id, again.body.id);
    });

    it('the enqueue fails before storing: a later retry with the key sends the message once, with ids after the events since', async (t) => {
      const hits: TurnJob[] = [];
      const app = await startTestApp(t, { mode, appOptions: { wrapBus: (bus) => refusedEnqueue(bus, hits) } });
      const { id } = await createSession(app);
      const key = randomUUID();
      const first = await postMessage(app, id, 'first', key);
      assert.ok(first.status >= 500 && hits.length === 1, `${first.status} ${first.text}`);
      const other = await postMessage(app, id, 'another', randomUUID());
      assert.equal(other.status, 201, other.text);
      await waitForEvent(app, id, 'session.idled', { timeoutMs: 20_000 });
      const retry = await postMessage(app, id, 'first', key);
      assert.equal(retry.status, 201, retry.text);
      await waitForEvent(app, id, 'session.idled', { n: 2, timeoutMs: 20_000 });
      const all = await listEvents(app, id);
      const texts = ofType(all, 'input.message').map((e) => e.data['message'].content[0].text);
      assert.deepEqual(texts, ['another', 'first'], 'each message once, the retried one after the other');
      assert.notEqual(retry.body.id, hits[0]!.job['input_message_id'], 'a message never accepted gets fresh ids');
      const ids = all.map((e) => e.id);
      assert.deepEqual(ids, [...ids].sort(), 'event ids increase with the sequence');
      assertLogIntegrity(all);
    });
  });
}

for (const mode of ['postgres', 'nats'] as const) {
  describe(`an idempotent retry after the first instance died (${mode})`, () => {
    it('the retry on another instance gets the outcome within seconds, not after the key’s stale minute; the message once', async (t) => {
      // The first instance's request queues its turn and then never answers, as when the
      // process is killed between the two; the instance then goes away and its heartbeat with it.
      // (Replaces a test that aged the key past the stale minute: a live owner now keeps its key,
      // test/http/idempotency.test.ts.)
      let release!: () => void;
      const stuck = new Promise<void>((r) => {
        release = r;
      });
      t.after(() => release());
      let held = false;
      const hang = (bus: Bus<SessionEvent>): Bus<SessionEvent> => {
        const queue = bus.turns;
        const enqueue = async (job: TurnJob) => {
          await queue.enqueue(job);
          if (!held && job.job['kind'] === 'start') {
            held = true;
            await stuck;
            throw new Error('the instance is gone');
          }
        };
        return { ...bus, turns: Object.assign(Object.create(queue) as TurnQueue, { enqueue }) };
      };
      const a = await startTestApp(t, { mode, env: { SHUTDOWN_TIMEOUT_MS: 300 }, appOptions: { wrapBus: hang } });
      const b = await startTestApp(t, {
        mode,
        databaseUrl: a.databaseUrl!,
        ...(mode === 'nats' ? { natsUrl: a.natsUrl! } : {}),
      });
      const { id } = await createSession(a);
      const key = randomUUID();
      const lost = postMessage(a, id, 'hello', key).catch(() => null);
      await waitForEvent(a, id, 'session.idled', { timeoutMs: 20_000 });
      assert.ok(held, 'the first request is stuck after its enqueue');
      assert.equal((await postMessage(b, id, 'hello', key)).status, 409, 'the first request is still running: 409');
      await a.app.close();
      const diedAt = Date.now();
      let retry = await postMessage(b, id, 'hello', key);
      while (retry.status === 409 && Date.now() - diedAt < 30_000) {
        await sleep(200);
        retry = await postMessage(b, id, 'hello', key);
      }
      const waitedMs = Date.now() - diedAt;
      console.log(`# retry answered ${retry.status} ${waitedMs} ms after the first instance died`);
      assert.equal(retry.status, 201, retry.text);
      assert.ok(waitedMs < 10_000, `the retry waited ${waitedMs} ms`);
      const inputs = ofType(await listEvents(b, id), 'input.message');
      assert.equal(retry.body.id, inputs[0]!.data['message'].id, 'the retry answers with the stored message');
      await assertRanOnce(b, id, retry.body.id);
      release();
      await lost;
    });
  });
}
