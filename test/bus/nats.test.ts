import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createBus, type Bus, type NatsBusOptions } from '../../src/bus/index.js';
import { newId } from '../../src/ids.js';
import { createLogger } from '../../src/log.js';
import { startNatsCluster, startNatsServer } from '../helpers/nats-server.js';
import { runBusConformance, type BusHarness } from './conformance.js';
import { within } from './conformance-events.js';

const ACK_WAIT_MS = 2000;
const log = createLogger('silent');

/** Buses on one fresh nats-server; `after` of the suite stops it. */
async function natsHarness(extra: Partial<NatsBusOptions> = {}): Promise<BusHarness> {
  const cleanups: (() => unknown)[] = [];
  const server = await startNatsServer({ t: { after: (fn) => cleanups.push(fn) } });
  const buses: Bus[] = [];
  return {
    leaseMs: ACK_WAIT_MS,
    // Shards decide where a session lives: the children must use the same count.
    childEnv: { BUS_KIND: 'nats', BUS_NATS_URL: server.url, BUS_NATS_SHARDS: String(extra.shards ?? 1) },
    async connect() {
      const bus = await createBus({ kind: 'nats', url: server.url, log, ackWaitMs: ACK_WAIT_MS, ...extra });
      buses.push(bus);
      return bus;
    },
    async close() {
      for (const bus of buses) await bus.close();
      for (const fn of cleanups) await fn();
    },
  };
}

runBusConformance({ name: 'nats', create: () => natsHarness() });

runBusConformance({ name: 'nats with 3 event shards', create: () => natsHarness({ shards: 3 }) });

test('nats - a process that never saw a session reads it from any position (binary search over the stream)', async (t) => {
  const harness = await natsHarness();
  t.after(() => harness.close());
  const writer = await harness.connect();
  const sessions = [newId(), newId(), newId()];
  // Interleave sessions so each one's stream sequences have gaps of varying width.
  for (let i = 0; i < 60; i++) {
    const sid = sessions[i % 3 === 0 ? 0 : 1 + (i % 2)]!;
    await writer.events.append(sid, [{ type: 'e', data: { i } }]);
  }
  const cold = await harness.connect();
  for (const sid of sessions) {
    const all = await writer.events.read(sid);
    // Descending, so hints from earlier reads only bound the search from above.
    for (let after = all.length; after >= 0; after -= 3) {
      const got = await cold.events.read(sid, { afterSequence: after, limit: 4 });
      assert.deepEqual(got, all.slice(after, after + 4), `read after ${after}`);
    }
    assert.deepEqual(await cold.events.findById(sid, all[all.length - 1]!.id), all[all.length - 1]);
  }
});

test('nats - ping throws while the server is down and recovers after a restart, on the same bus', async (t) => {
  const server = await startNatsServer({ t });
  const bus = await createBus({ kind: 'nats', url: server.url, log, ackWaitMs: ACK_WAIT_MS, requestTimeoutMs: 1000 });
  t.after(() => bus.close());
  const sid = newId();
  await bus.ping();
  await bus.events.append(sid, [{ type: 'before' }]);

  await server.stop();
  await within(
    (async () => {
      for (;;) {
        try {
          await bus.ping();
        } catch {
          return;
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    })(),
    5000,
    'ping to fail while NATS is down',
  );

  await server.restart();
  const started = Date.now();
  await within(
    (async () => {
      for (;;) {
        try {
          return await bus.ping();
        } catch {
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    })(),
    15_000,
    'ping to succeed after the restart',
  );
  t.diagnostic(`ping healthy again ${Date.now() - started} ms after the restart`);
  // The file store kept the log, and the same bus appends again.
  const r = await bus.events.append(sid, [{ type: 'after' }]);
  assert.ok(r.ok && r.events[0]!.sequence === 2);
});

test('nats - a 3-node cluster with replicated streams appends, reads and claims', async (t) => {
  const cluster = await startNatsCluster(3, { t });
  const bus = await createBus({ kind: 'nats', url: cluster.url, log, ackWaitMs: ACK_WAIT_MS, replicas: 3 });
  t.after(() => bus.close());
  const sid = newId();
  const r = await bus.events.append(sid, [{ type: 'a' }, { type: 'b' }], { expectedSequence: 0 });
  assert.ok(r.ok);
  assert.deepEqual((await bus.events.read(sid)).map((e) => e.sequence), [1, 2]);
  await bus.turns.enqueue({ session_id: sid, turn_id: newId(), job: {} });
  const claim = await bus.turns.claim('w1', { waitMs: 5000 });
  assert.equal(claim?.turn.session_id, sid);
  await claim.ack();
  assert.equal(await bus.turns.has(sid), false);
});
