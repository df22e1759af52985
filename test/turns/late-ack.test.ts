/**
 * Issue 32 item 4: a message sent after `session.idled` while the finished turn's ack has not
 * landed (a frozen worker, a NATS election) is accepted, not refused as busy: the API removes
 * the job of a turn whose end is stored. The finished turn's late ack leaves the new turn alone,
 * and every turn runs once. The same holds for the job of a void turn (its start was answered
 * with an error, and its publish landed later): it never runs, so it does not make the session busy.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SessionEvent } from '../../schemas/events.js';
import type { Bus, ClaimOptions, TurnClaim, TurnQueue } from '../../src/bus/ports.js';
import pg from 'pg';
import { newId } from '../../src/ids.js';
import { startTestApp } from '../helpers/app.js';
import { assertLogIntegrity, createSession, listEvents, sendMessage, waitForEvent } from './helpers.js';

/** Far past the API's 2 s wait for a previous turn's ack: without the removal the POST is a 409. */
const ACK_DELAY_MS = 6_000;

/** Holds the first claim's ack for ACK_DELAY_MS; `late` settles when that ack has run. */
function slowFirstAck(bus: Bus<SessionEvent>, late: Promise<void>[]): Bus<SessionEvent> {
  const queue = bus.turns;
  const claim = async (workerId: string, opts?: ClaimOptions): Promise<TurnClaim | null> => {
    const c = await queue.claim(workerId, opts);
    if (!c || late.length > 0) return c;
    let release!: () => void;
    late.push(new Promise<void>((r) => (release = r)));
    const ack = async () => {
      await new Promise((r) => setTimeout(r, ACK_DELAY_MS));
      await c.ack().finally(release);
    };
    return Object.assign(Object.create(c) as TurnClaim, { ack });
  };
  return { ...bus, turns: Object.assign(Object.create(queue) as TurnQueue, { claim }) };
}

for (const mode of ['postgres', 'nats'] as const) {
  describe(`turns: the previous turn's ack is late (${mode})`, () => {
    it('a message after session.idled is accepted at once; both turns run once; the late ack removes nothing', async (t) => {
      const late: Promise<void>[] = [];
      const app = await startTestApp(t, { mode, appOptions: { wrapBus: (bus) => slowFirstAck(bus, late) } });
      const { id } = await createSession(app);
      assert.equal((await sendMessage(app, id, 'first')).status, 201);
      await waitForEvent(app, id, 'session.idled');
      assert.equal(late.length, 1, 'the first turn’s ack is held');
      const started = Date.now();
      const second = await sendMessage(app, id, 'second');
      assert.equal(second.status, 201, second.text);
      assert.ok(Date.now() - started < ACK_DELAY_MS / 2, `answered after ${Date.now() - started} ms`);
      await waitForEvent(app, id, 'session.idled', { n: 2 });
      await late[0];
      const events = await listEvents(app, id);
      assert.equal(events.filter((e) => e.type === 'turn.started').length, 2);
      assert.equal(events.filter((e) => e.type === 'input.message').length, 2);
      assertLogIntegrity(events);
      // The late ack took nothing of the second turn's: the session takes a third message.
      assert.equal((await sendMessage(app, id, 'third')).status, 201);
      await waitForEvent(app, id, 'session.idled', { n: 3 });
      assert.ok(app.logs.some((l) => l.includes('removed for the next message')));
    });
  });

  describe(`turns: a void turn's job landed late (${mode})`, () => {
    it('the next message is accepted and runs; the void turn never does', async (t) => {
      // An API-only instance: nothing claims jobs, as when the workers sit on a frozen NATS node.
      const api = await startTestApp(t, { mode, env: { ROLE: 'api' } });
      const { id } = await createSession(api);
      const voidTurn = newId();
      await api.app.services.bus.turns.enqueue({ session_id: id, turn_id: voidTurn, job: {} });
      const db = new pg.Client({ connectionString: api.databaseUrl });
      await db.connect();
      await db
        .query('update sessions set void_turn_ids = array_append(void_turn_ids, $1::uuid) where id = $2', [voidTurn, id])
        .finally(() => db.end());

      const r = await sendMessage(api, id, '@tokens 3\nafter the void one');
      assert.equal(r.status, 201, r.text);
      assert.notEqual(await api.app.services.bus.turns.queued(id), voidTurn);
      assert.ok(api.logs.some((l) => l.includes('"why":"void"') && l.includes(voidTurn)));

      const worker = await startTestApp(t, { mode, databaseUrl: api.databaseUrl, natsUrl: api.natsUrl });
      const events = await waitForEvent(worker, id, 'session.idled');
      assert.equal(events.filter((e) => e.type === 'turn.started').length, 1);
      assert.ok(!events.some((e) => e.context['turn_id'] === voidTurn), 'nothing of the void turn is logged');
      assertLogIntegrity(events);
    });

    it('a job that is neither finished nor void keeps the session busy (409)', async (t) => {
      const api = await startTestApp(t, { mode, env: { ROLE: 'api' } });
      const { id } = await createSession(api);
      const other = newId();
      await api.app.services.bus.turns.enqueue({ session_id: id, turn_id: other, job: {} });
      const r = await sendMessage(api, id, 'refused');
      assert.equal(r.status, 409, r.text);
      assert.equal(await api.app.services.bus.turns.queued(id), other, 'the live job stays');
    });
  });
}
