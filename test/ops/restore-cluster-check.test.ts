import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { it } from 'node:test';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { backup, restore } from '../../scripts/backup.js';
import { addReplicatedStream, publishToNewStream, startNatsCluster, type NatsServer } from '../helpers/nats-server.js';
import { createTestDatabase } from '../helpers/postgres.js';

/**
 * Restore into a cluster that is not whole (issue 30 item 14): a fresh 3-node cluster whose third
 * node had not joined formed a JetStream group of 2, every health check said ok, and the restore
 * of the R3 streams failed with `no suitable peers for placement`. scripts/backup.ts now checks
 * first and refuses, naming the server that is missing, before it changes anything; once the node
 * has joined the same restore goes through.
 */

/** Waits until `server`'s view of the JetStream meta group has a leader and `peers` current members. */
async function waitMetaPeers(servers: NatsServer[], peers: number, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    for (const s of servers) {
      const jsz = await fetch(`${s.monitorUrl}/jsz`)
        .then((r) => r.json() as Promise<{ meta_cluster?: { leader?: string; replicas?: { current: boolean }[] } }>)
        .catch(() => undefined);
      const meta = jsz?.meta_cluster;
      if (meta?.leader && (meta.replicas ?? []).filter((r) => r.current).length === peers - 1) return;
    }
    assert.ok(Date.now() < deadline, `no meta group of ${peers} current peers within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

it('restore refuses a 3-node cluster with a node missing, naming it, changes nothing, and restores once it joined', async (t) => {
  const cluster = await startNatsCluster(3, { t, secure: false });
  const [n1, n2, n3] = cluster.servers as [NatsServer, NatsServer, NatsServer];
  const db = await createTestDatabase('restore_check');
  t.after(() => db.drop());
  const lines: string[] = [];
  const settings = { databaseUrl: db.url, natsUrl: cluster.url, log: (l: string) => lines.push(l) };

  // A stream of three replicas, as the service makes in a 3-node cluster, with three messages.
  const nc = await connect({ servers: cluster.url.split(',') });
  const jsm = await jetstreamManager(nc);
  await addReplicatedStream(jsm, { name: 'EVENTS_0', subjects: ['evt.0.*'], num_replicas: 3 });
  for (let i = 0; i < 3; i++) await publishToNewStream(jetstream(nc), 'evt.0.s', `event ${i}`);
  await nc.close();
  const dir = mkdtempSync(join(tmpdir(), 'restore-check-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  await backup(dir, settings);

  // A fresh cluster of which only two nodes came up: they form a JetStream group of 2.
  await cluster.stop();
  for (const s of cluster.servers) rmSync(s.storeDir, { recursive: true, force: true });
  await Promise.all([n1.restart(), n2.restart()]);
  await waitMetaPeers([n1, n2], 2);

  await assert.rejects(restore(dir, settings), (err: Error) => {
    assert.match(err.message, /^restore refused, the NATS cluster is not whole: not joined: /);
    assert.ok(err.message.includes(`127.0.0.1:${n3.port}`), `names the missing server: ${err.message}`);
    assert.ok(!err.message.includes(`127.0.0.1:${n1.port}`), `names only the missing server: ${err.message}`);
    assert.match(err.message, /a stream of 3 replica\(s\), as in the backup, cannot be placed/);
    assert.match(err.message, /nothing was changed/);
    return true;
  });
  const check = await connect({ servers: n1.address });
  const names: string[] = [];
  for await (const name of (await jetstreamManager(check)).streams.names()) names.push(name);
  await check.close();
  assert.deepEqual(names, [], 'no stream was restored (and the throwaway placement stream is gone)');

  // The third node joins: the same restore goes through and says it checked.
  await n3.restart();
  await waitMetaPeers([n1, n2, n3], 3);
  await restoreOnceJoined(dir, settings);
  assert.ok(
    lines.some((l) => /all 3 server\(s\) of NATS_URL answer JetStream and 3 replica\(s\) can be placed/.test(l)),
    lines.join('\n'),
  );
  const after = await connect({ servers: n1.address });
  const info = await (await jetstreamManager(after)).streams.info('EVENTS_0');
  await after.close();
  assert.equal(info.state.messages, 3);
  assert.equal(info.config.num_replicas, 3);
});

/**
 * The runbook's "restore again": on a loaded machine the meta leader may still count a node that
 * shows current as offline for placement for a moment (CI, 2026-11-30: "no suitable peers for
 * placement, peer offline"). A refused restore changes nothing (asserted above), so it is retried
 * for that refusal only, within a bound.
 */
async function restoreOnceJoined(dir: string, settings: Parameters<typeof restore>[1]): Promise<void> {
  for (const deadline = Date.now() + 30_000; ; ) {
    try {
      return await restore(dir, settings);
    } catch (err) {
      if (Date.now() > deadline || !/cannot be placed: .*peer offline/.test((err as Error).message)) throw err;
      await sleep(500);
    }
  }
}
