/**
 * Issue 13, the SIGTERM straggler (bench/README.md, "Fifth run"): on a replicated stream the leader
 * stages a publish's msg id (with stream sequence 0) before the replicas agree, and keeps it for
 * the whole duplicate window even when the publish is then refused (a broken chain: server 2.10
 * checks `expect.lastMsgID` only when applying). Every later publish of that id is acked
 * `duplicate: true, seq: 0` and not stored, so an append that re-sends the id (the API's preamble
 * re-sent by a worker, a chained append's next round) must store the event some other way.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jetstream, type JetStreamClient } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { createBus } from '../../src/bus/index.js';
import { sessionSubjects } from '../../src/bus/nats/topology.js';
import { newId } from '../../src/ids.js';
import { createLogger } from '../../src/log.js';
import { natsClientOptions, startNatsCluster } from '../helpers/nats-server.js';
import { racePreamble } from './preamble-race.js';

const log = createLogger('silent');
/** What an append that meets a staged id may take: a few round trips, not the duplicate window. */
const BOUND_MS = 3_000;

/**
 * Publishes each event chained onto a message that is not the stream's last: refused when
 * applied, after its id was staged (as a burst another writer interleaved).
 */
async function stage(js: JetStreamClient, sessionId: string, events: readonly { id: string }[]): Promise<void> {
  for (const e of events) {
    await assert.rejects(
      js.publish(sessionSubjects(sessionId, 1).subject, JSON.stringify(e), { msgID: e.id, expect: { lastMsgID: newId() } }),
      /wrong last msg ID/i,
    );
    const again = await js.publish(sessionSubjects(sessionId, 1).subject, '{}', { msgID: e.id });
    assert.deepEqual([again.duplicate, again.seq], [true, 0], 'the server holds the id without an event');
  }
}

describe('nats event append - an id the stream staged and refused (3 replicas)', () => {
  it('is stored once, in order, within a few round trips; later ids of the batch too', async (t) => {
    const cluster = await startNatsCluster(3, { t });
    const bus = await createBus({ kind: 'nats', url: cluster.url, auth: cluster.auth, log, replicas: 3, shards: 1 });
    t.after(() => bus.close());
    const nc = await connect(await natsClientOptions(cluster));
    t.after(() => nc.close());
    const js = jetstream(nc);

    const sid = newId();
    assert.ok((await bus.events.append(sid, [{ type: 'before' }])).ok);
    const batch = ['input.message', 'turn.started', 'session.activated'].map((type) => ({ id: newId(), type }));
    await stage(js, sid, batch.slice(1));

    const started = Date.now();
    const r = await bus.events.append(sid, batch);
    const took = Date.now() - started;
    assert.ok(r.ok, JSON.stringify(r));
    assert.deepEqual(
      r.events.map((e) => [e.id, e.sequence]),
      batch.map((e, i) => [e.id, i + 2]),
    );
    assert.ok(took < BOUND_MS, `appended in ${took} ms`);
    const all = await bus.events.read(sid);
    assert.deepEqual(
      all.map((e) => [e.type, e.sequence]),
      [['before', 1], ...batch.map((e, i) => [e.type, i + 2])],
    );
    // A retry of the same append finds the stored copies instead of storing them again.
    const retry = await bus.events.append(sid, batch);
    assert.ok(retry.ok);
    assert.deepEqual(
      retry.events.map((e) => e.sequence),
      [2, 3, 4],
    );
    assert.equal((await bus.events.read(sid)).length, 4, 'each event once');
  });

  it('two writers appending the same batch at once (ids staged by the other one, or refused earlier): each event once, in order', async (t) => {
    const cluster = await startNatsCluster(3, { t });
    const [a, b] = [
      await createBus({ kind: 'nats', url: cluster.url, auth: cluster.auth, log, replicas: 3, shards: 1 }),
      await createBus({ kind: 'nats', url: cluster.url, auth: cluster.auth, log, replicas: 3, shards: 1 }),
    ];
    const nc = await connect(await natsClientOptions(cluster));
    t.after(() => Promise.all([a.close(), b.close(), nc.close()]));
    const js = jetstream(nc);
    for (let s = 0; s < 20; s++) {
      // Every other session: both writers meet staged ids and store them under msg ids of their own.
      await racePreamble([a, b], s % 2 ? (sid, batch) => stage(js, sid, batch.slice(1)) : undefined);
    }
  });
});
