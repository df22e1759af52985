import assert from 'node:assert/strict';
import { it } from 'node:test';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { createBus } from '../../src/bus/index.js';
import { CLAIM_STREAM, TURN_CONSUMER, TURN_STREAM } from '../../src/bus/nats/topology.js';
import { createLogger } from '../../src/log.js';
import { natsClientOptions, startNatsCluster } from '../helpers/nats-server.js';

const log = createLogger('silent');
/** Instances per server that start together (a rolling deploy's new pods). */
const PER_SERVER = 2;
/** Fresh topologies in a row: the race is in a stream's first moments, and one start loses it about one time in ten. */
const ROUNDS = 6;
/**
 * Of identical stream creates sent at once, nats-server 2.10 sometimes leaves one unanswered; the
 * start retries after its request timeout (5 s by default), so a shorter one keeps the rounds short.
 */
const REQUEST_TIMEOUT_MS = 2_000;

/**
 * Instances starting together on a new cluster each create the streams, then read the claims
 * bucket's stream and add the workers consumer. The meta leader answered "stream not found"
 * for a stream whose own leader had already answered its creation (the meta leader had not
 * applied it yet), and the instance failed to start (CI: StreamNotFoundError from
 * ensureBucketReplicas; here also from the consumer add). Each round deletes the streams, so
 * every round is a new topology on the same cluster.
 */
it('instances starting together on a new 3-node cluster all open the bus (no "stream not found" from a stream just created)', async (t) => {
  const cluster = await startNatsCluster(3, { t });
  const nc = await connect(await natsClientOptions(cluster));
  t.after(() => nc.close());
  const jsm = await jetstreamManager(nc);
  for (let round = 1; round <= ROUNDS; round++) {
    for await (const name of jsm.streams.names()) await jsm.streams.delete(name);
    const opened = await Promise.allSettled(
      cluster.servers.flatMap((s) =>
        Array.from({ length: PER_SERVER }, () =>
          createBus({ kind: 'nats', url: s.url, auth: cluster.auth, log, requestTimeoutMs: REQUEST_TIMEOUT_MS }),
        ),
      ),
    );
    await Promise.all(opened.flatMap((r) => (r.status === 'fulfilled' ? [r.value.close()] : [])));
    const failed = opened.flatMap((r) => (r.status === 'rejected' ? [`${(r.reason as Error).name}: ${(r.reason as Error).message}`] : []));
    assert.deepEqual(failed, [], `round ${round}: ${failed.length} of ${opened.length} instances failed to start`);
    // What they made: the claims bucket with 3 replicas and the workers consumer.
    assert.equal((await jsm.streams.info(CLAIM_STREAM)).config.num_replicas, 3);
    assert.equal((await jsm.consumers.info(TURN_STREAM, TURN_CONSUMER)).name, TURN_CONSUMER);
  }
});
