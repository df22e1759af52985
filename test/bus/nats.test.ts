import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { createBus } from '../../src/bus/index.js';
import type { NatsAuthOptions } from '../../src/bus/nats/connect-options.js';
import { chooseReplicas } from '../../src/bus/nats/replicas.js';
import { newId } from '../../src/ids.js';
import { createLogger } from '../../src/log.js';
import { natsClientOptions, startNatsCluster, startNatsServer } from '../helpers/nats-server.js';
import { runBusConformance } from './conformance.js';
import { ACK_WAIT_MS, natsHarness } from './nats-harness.js';
import { within } from './conformance-events.js';

const log = createLogger('silent');

runBusConformance({ name: 'nats', create: () => natsHarness() });

runBusConformance({ name: 'nats with 3 event shards', create: () => natsHarness({ shards: 3 }) });

// Every watched session on its shard's wildcard subscription (live-subscriptions.ts).
runBusConformance({ name: 'nats with live events through the shard wildcard', create: () => natsHarness({ liveWildcardMinSessions: 1 }) });

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
  const bus = await createBus({ kind: 'nats', url: server.url, auth: server.auth, log, ackWaitMs: ACK_WAIT_MS, requestTimeoutMs: 1000 });
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

/** num_replicas of every stream the bus creates (EVENTS_<k>, TURNS, the claims bucket's KV stream). */
async function replicasOf(server: { url: string; auth: NatsAuthOptions }, shards = 1): Promise<Record<string, number>> {
  const nc = await connect(await natsClientOptions(server));
  try {
    const jsm = await jetstreamManager(nc);
    const names = [...Array.from({ length: shards }, (_, k) => `EVENTS_${k}`), 'TURNS', 'KV_turn_claims'];
    const out: Record<string, number> = {};
    for (const name of names) out[name] = (await jsm.streams.info(name)).config.num_replicas;
    return out;
  } finally {
    await nc.close();
  }
}

/** A logger whose JSON lines land in `lines`. */
function capturingLogger(): { log: ReturnType<typeof createLogger>; lines: () => Record<string, unknown>[] } {
  const raw: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      raw.push(String(chunk));
      cb();
    },
  });
  return { log: createLogger('info', sink), lines: () => raw.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

test('nats replicas - auto is min(3, servers of the cluster): advertised, else the configured URLs; a fixed count is kept', () => {
  const urls3 = ['nats://a:4222', 'nats://b:4222', 'nats://c:4222'];
  assert.deepEqual(chooseReplicas('auto', { cluster: undefined }, urls3), {
    replicas: 1,
    servers: 1,
    counted: 'not_clustered',
    source: 'auto',
  });
  const three = { cluster: 'c', connect_urls: ['a:4222', 'b:4222', 'c:4222'] };
  assert.equal(chooseReplicas('auto', three, ['nats://a:4222']).replicas, 3);
  assert.equal(
    chooseReplicas('auto', { cluster: 'c', connect_urls: ['a:4222', 'b:4222'] }, urls3).replicas,
    2,
    'what the server advertises wins',
  );
  assert.equal(chooseReplicas('auto', { cluster: 'c', connect_urls: ['a', 'b', 'c', 'd', 'e'] }, []).replicas, 3);
  // no_advertise: connect_urls is absent
  assert.deepEqual(chooseReplicas('auto', { cluster: 'c' }, urls3), {
    replicas: 3,
    servers: 3,
    counted: 'configured_urls',
    source: 'auto',
  });
  assert.deepEqual(chooseReplicas('auto', { cluster: 'c' }, ['nats://nats:4222']), {
    replicas: 1,
    servers: 1,
    counted: 'configured_urls',
    source: 'auto',
  });
  assert.deepEqual(chooseReplicas(2, three, []), { replicas: 2, servers: 3, counted: 'advertised', source: 'configured' });
  assert.throws(() => chooseReplicas(6, three, []), RangeError);
});

test('nats replicas - a single server gets one replica per stream and bucket by default', async (t) => {
  const server = await startNatsServer({ t });
  const bus = await createBus({ kind: 'nats', url: server.url, auth: server.auth, log, ackWaitMs: ACK_WAIT_MS, shards: 2 });
  t.after(() => bus.close());
  assert.deepEqual(await replicasOf(server, 2), { EVENTS_0: 1, EVENTS_1: 1, TURNS: 1, KV_turn_claims: 1 });
});

test('nats - a 3-node cluster: auto raises streams and bucket made with 1 replica to 3, and appends, reads and claims work', async (t) => {
  const cluster = await startNatsCluster(3, { t });
  // A deployment from before NATS_REPLICAS: everything on one replica, with data in it.
  const old = await createBus({ kind: 'nats', url: cluster.url, auth: cluster.auth, log, ackWaitMs: ACK_WAIT_MS, replicas: 1 });
  const sid = newId();
  assert.ok((await old.events.append(sid, [{ type: 'a' }], { expectedSequence: 0 })).ok);
  await old.close();
  assert.deepEqual(await replicasOf(cluster), { EVENTS_0: 1, TURNS: 1, KV_turn_claims: 1 });

  const { log: captured, lines } = capturingLogger();
  const bus = await createBus({ kind: 'nats', url: cluster.url, auth: cluster.auth, log: captured, ackWaitMs: ACK_WAIT_MS });
  t.after(() => bus.close());
  assert.deepEqual(await replicasOf(cluster), { EVENTS_0: 3, TURNS: 3, KV_turn_claims: 3 });
  const chosen = lines().find((l) => l['msg'] === 'JetStream replicas');
  assert.deepEqual([chosen?.['replicas'], chosen?.['source'], chosen?.['servers'], chosen?.['counted']], [3, 'auto', 3, 'advertised']);
  const raised = lines()
    .filter((l) => l['msg'] === 'raising stream replicas')
    .map((l) => [l['stream'], l['from'], l['to']]);
  assert.deepEqual(raised, [
    ['EVENTS_0', 1, 3],
    ['TURNS', 1, 3],
    ['KV_turn_claims', 1, 3],
  ]);

  const r = await bus.events.append(sid, [{ type: 'b' }, { type: 'c' }], { expectedSequence: 1 });
  assert.ok(r.ok);
  assert.deepEqual(
    (await bus.events.read(sid)).map((e) => [e.sequence, e.type]),
    [
      [1, 'a'],
      [2, 'b'],
      [3, 'c'],
    ],
  );
  await bus.turns.enqueue({ session_id: sid, turn_id: newId(), job: {} });
  const claim = await bus.turns.claim('w1', { waitMs: 5000 });
  assert.equal(claim?.turn.session_id, sid);
  assert.ok(await claim.isCurrent(), 'the claim was recorded in the replicated bucket');
  await claim.ack();
  assert.equal(await bus.turns.queued(sid), null);

  // A lower fixed count later never shrinks what is there.
  const lower = await createBus({ kind: 'nats', url: cluster.url, auth: cluster.auth, log, ackWaitMs: ACK_WAIT_MS, replicas: 1 });
  await lower.close();
  assert.deepEqual(await replicasOf(cluster), { EVENTS_0: 3, TURNS: 3, KV_turn_claims: 3 });
});
