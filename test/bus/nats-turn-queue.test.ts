import assert from 'node:assert/strict';
import { it, type TestContext } from 'node:test';
import { type KV, Kvm } from '@nats-io/kv';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { type Bus, createBus, type TurnJob, type LoggedEvent } from '../../src/bus/index.js';
import { CLAIM_BUCKET } from '../../src/bus/nats/topology.js';
import { newId } from '../../src/ids.js';
import { createLogger } from '../../src/log.js';
import { natsClientOptions, startNatsServer } from '../helpers/nats-server.js';

const log = createLogger('silent');
const turn = (sessionId: string, turnId = newId()): TurnJob => ({ session_id: sessionId, turn_id: turnId, job: { input: 'hello' } });

/** The subjects of every message get sent on the server (leader and direct), as they happen. */
async function watchGets(nc: NatsConnection): Promise<string[]> {
  const gets: string[] = [];
  const record = (_err: unknown, msg: { subject: string }) => {
    gets.push(msg.subject);
  };
  nc.subscribe('$JS.API.STREAM.MSG.GET.>', { callback: record });
  nc.subscribe('$JS.API.DIRECT.GET.>', { callback: record });
  await nc.flush();
  return gets;
}

/** Another process's record of a later delivery of the session's next turn: this process's claim is skipped, the record kept. */
async function assertLaterDeliveryWins(bus: Bus<LoggedEvent>, claims: KV, sessionId: string): Promise<void> {
  const turnId = newId();
  const later = { turn_id: turnId, delivery: 5, worker: 'w2', token: 'theirs' };
  await claims.put(sessionId, JSON.stringify(later));
  await bus.turns.enqueue(turn(sessionId, turnId));
  assert.equal(await bus.turns.claim('w1', { waitMs: 300 }), null, 'a later delivery owns the turn: this one is skipped');
  assert.deepEqual((await claims.get(sessionId))?.json(), later);
}

/** A bus on a fresh server, a second connection to watch it, and that connection's view of the claims bucket. */
async function openBus(t: TestContext) {
  const server = await startNatsServer({ t });
  const bus = await createBus({ kind: 'nats', url: server.url, auth: server.auth, log });
  const nc = await connect(await natsClientOptions(server));
  t.after(async () => {
    await bus.close();
    await nc.close();
  });
  return { bus, nc, claims: await new Kvm(nc).open(CLAIM_BUCKET) };
}

it('nats turn queue - the next claim after our own release skips the record read, unless another process wrote it since', async (t) => {
  const { bus, claims } = await openBus(t);

  // Released by us: the marker's revision is what the next claim expects; the claim is fenced as before.
  const sid = newId();
  await bus.turns.enqueue(turn(sid));
  const first = await bus.turns.claim('w1');
  assert.ok(first && (await first.isCurrent()));
  await first.ack();
  const marker = await claims.get(sid);
  assert.equal(marker?.operation, 'DEL', 'ack leaves a delete marker, like kv.delete');
  await bus.turns.enqueue(turn(sid));
  const second = await bus.turns.claim('w1');
  assert.ok(second && (await second.isCurrent()));
  assert.equal((await claims.get(sid))?.revision, marker!.revision + 1, 'put right behind our marker');
  await second.ack();

  // Another process wrote the record after our release: it is read and decided on, not overwritten.
  const other = newId();
  await bus.turns.enqueue(turn(other));
  await (await bus.turns.claim('w1'))!.ack();
  await assertLaterDeliveryWins(bus, claims, other);
});

it('nats bus - a new session created here: its first append and first claim send no message get (no 404 reads), and the fences still hold', async (t) => {
  const { bus, nc, claims } = await openBus(t);
  const gets = await watchGets(nc);

  const sid = newId();
  const created = await bus.events.append(sid, [{ type: 'session.created', data: {} }], { expectedSequence: 0 });
  assert.equal(created.ok, true);
  await bus.turns.enqueue(turn(sid));
  const claim = await bus.turns.claim('w1');
  assert.ok(claim, 'claimed');
  await nc.flush();
  assert.deepEqual(gets, [], 'neither the empty tail nor the absent claim record is read');
  assert.equal((await claims.get(sid))?.json<{ token: string }>().token !== undefined, true, 'the record is written');
  assert.ok(await claim.isCurrent());
  await claim.ack();

  // An expectation of an empty session is still checked by the server: a session with events refuses it.
  const again = await bus.events.append(sid, [{ type: 'session.created', data: {} }], { expectedSequence: 0 });
  assert.deepEqual(again, { ok: false, currentSequence: 1 });

  // A record written by another process since the session's first event: read and decided on, not overwritten.
  const other = newId();
  assert.equal((await bus.events.append(other, [{ type: 'session.created', data: {} }], { expectedSequence: 0 })).ok, true);
  await assertLaterDeliveryWins(bus, claims, other);
});

it('nats event log - a read within a tail this process knows (SSE open: the tail, then the replay up to it) sends no second get', async (t) => {
  const { bus, nc } = await openBus(t);
  const sid = newId();
  const created = await bus.events.append(sid, [{ type: 'session.created', data: {} }], { expectedSequence: 0 });
  assert.ok(created.ok);
  await bus.events.append(sid, [{ type: 'user.message', data: { n: 2 } }]);
  const gets = await watchGets(nc);

  assert.equal(await bus.events.lastSequence(sid), 2);
  const replay = await bus.events.read(sid, { afterSequence: 0, limit: 2 });
  assert.deepEqual(
    replay.map((e) => [e.sequence, e.type]),
    [
      [1, 'session.created'],
      [2, 'user.message'],
    ],
  );
  assert.deepEqual(
    (await bus.events.read(sid, { afterSequence: 1, limit: 1 })).map((e) => e.id),
    [replay[1]!.id],
  );
  await nc.flush();
  assert.equal(gets.length, 1, 'only the tail lookup of lastSequence');

  // A read that may reach past the known tail still asks the server (another writer may have appended).
  assert.equal((await bus.events.read(sid, { afterSequence: 0, limit: 3 })).length, 2);
  await nc.flush();
  assert.equal(gets.length, 2);
});

it('nats turn queue - a claim record deleted or purged by another process is no record: the claim is not current, and the next claim puts its own behind the marker', async (t) => {
  const { bus, claims } = await openBus(t);
  for (const remove of ['delete', 'purge'] as const) {
    const sid = newId();
    await bus.turns.enqueue(turn(sid));
    const claim = await bus.turns.claim('w1');
    assert.ok(claim && (await claim.isCurrent()), `${remove}: current while its record is there`);
    await claims[remove](sid);
    const marker = await claims.get(sid);
    assert.equal(marker?.operation, remove === 'delete' ? 'DEL' : 'PURGE');
    assert.equal(await claim.isCurrent(), false, `${remove}: a marker is no record, so not this claim's`);

    // A later claim of the session reads the marker as "no record" and puts right behind it.
    await claim.ack(); // the fence of ack: the record is not ours any more, so the job stays
    await bus.turns.removeFinished(sid, claim.turn.turn_id);
    await bus.turns.enqueue(turn(sid));
    const next = await bus.turns.claim('w1');
    assert.ok(next && (await next.isCurrent()), `${remove}: the next claim is current`);
    assert.equal((await claims.get(sid))?.revision, marker!.revision + 1, `${remove}: put right behind the marker`);
    await next.ack();
  }
});
