import assert from 'node:assert/strict';
import { it } from 'node:test';
import { jetstreamManager, StorageType } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { createLeaderGet } from '../../src/bus/nats/leader-get.js';
import { addReplicatedStream, natsClientOptions, startNatsCluster } from '../helpers/nats-server.js';

const TIMEOUT_MS = 12_000;

/**
 * Issue 13 (NATS-node recovery < 10 s): after the node leading a stream is SIGKILLed, the stream
 * elects a leader 4-9 s later, and a get sent meanwhile is dropped, not refused: one request
 * waited its whole timeout, past the election. A get sent again every second answers within a
 * second of the new leader.
 */
it('nats leader get - a get sent while a stream elects a leader answers soon after the election, not at its timeout', async (t) => {
  const cluster = await startNatsCluster(3, { t });
  const nc = await connect(await natsClientOptions(cluster));
  t.after(() => nc.close());
  const jsm = await jetstreamManager(nc);
  await addReplicatedStream(jsm, { name: 'LG', subjects: ['lg.>'], num_replicas: 3, storage: StorageType.File });
  await nc.request('lg.a', 'x');
  const leader = (await jsm.streams.info('LG')).cluster?.leader;
  const node = cluster.servers.find((s) => s.name === leader)!;
  // A client connected to the survivors, as an instance is once its own node died.
  const survivor = cluster.servers.find((s) => s !== node)!;
  const client = await connect(await natsClientOptions(survivor));
  t.after(() => client.close());
  const plain = await jetstreamManager(client, { timeout: TIMEOUT_MS, checkAPI: false });
  const resending = await createLeaderGet(client, { timeoutMs: TIMEOUT_MS });

  await node.kill();
  const t0 = Date.now();
  const settle = (p: Promise<unknown>) =>
    p.then(
      (m) => ({ ok: m !== null, ms: Date.now() - t0 }),
      (err: unknown) => ({ ok: false, ms: Date.now() - t0, err: String(err) }),
    );
  const [once, again] = await Promise.all([
    settle(plain.streams.getMessage('LG', { last_by_subj: 'lg.a' })),
    settle(resending('LG', { last_by_subj: 'lg.a' })),
  ]);
  t.diagnostic(`get sent again: ${JSON.stringify(again)}; sent once: ${JSON.stringify(once)}`);
  assert.ok(again.ok, `the resent get answered: ${JSON.stringify(again)}`);
  assert.ok(again.ms < TIMEOUT_MS - 1_000, `within the election and a second: ${again.ms} ms`);
  // The same get sent once waited out its timeout: the election alone does not answer it.
  assert.ok(once.ms >= again.ms + 1_000, `a get sent once settled later: ${JSON.stringify(once)} vs ${again.ms} ms`);
});
