import assert from 'node:assert/strict';
import { it } from 'node:test';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { createBus, type TurnJob } from '../../src/bus/index.js';
import { CLAIM_BUCKET } from '../../src/bus/nats/topology.js';
import { newId } from '../../src/ids.js';
import { createLogger } from '../../src/log.js';
import { natsClientOptions, startNatsServer } from '../helpers/nats-server.js';

const log = createLogger('silent');
const turn = (sessionId: string, turnId = newId()): TurnJob => ({ session_id: sessionId, turn_id: turnId, job: { input: 'hello' } });

it('nats turn queue - the next claim after our own release skips the record read, unless another process wrote it since', async (t) => {
  const server = await startNatsServer({ t });
  const bus = await createBus({ kind: 'nats', url: server.url, auth: server.auth, log });
  const nc = await connect(await natsClientOptions(server));
  t.after(async () => {
    await bus.close();
    await nc.close();
  });
  const claims = await new Kvm(nc).open(CLAIM_BUCKET);

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
  const turnId = newId();
  await bus.turns.enqueue(turn(other));
  await (await bus.turns.claim('w1'))!.ack();
  const later = { turn_id: turnId, delivery: 5, worker: 'w2', token: 'theirs' };
  await claims.put(other, JSON.stringify(later));
  await bus.turns.enqueue(turn(other, turnId));
  assert.equal(await bus.turns.claim('w1', { waitMs: 300 }), null, 'a later delivery owns the turn: this one is skipped');
  assert.deepEqual((await claims.get(other))?.json(), later);
});
