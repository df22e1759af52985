import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { createBus, type Bus, type LoggedEvent } from '../../src/bus/index.js';
import { createHealthProbe } from '../../src/bus/nats/health-probe.js';
import { createLogger } from '../../src/log.js';
import { natsClientOptions, startNatsCluster, type NatsCluster } from '../helpers/nats-server.js';

/**
 * Issue 32 item 2: with one NATS node frozen (SIGSTOP) for 15 s, every instance's /health failed
 * (the probe's stream reads went unanswered until the stream elected a new leader) and the one
 * connected to the frozen node stayed unhealthy for the whole freeze (no client pings, and a
 * reconnect's handshake with a frozen node waited 20 s). Before the fix: unhealthy
 * [10.1, 16.1, 16.1] s for the three instances.
 */
const log = createLogger('silent');
const FREEZE_MS = 15_000;
const PROBE_EVERY_MS = 250;
const HEALTH_TIMEOUT_MS = 2_000;

async function leaderOf(cluster: NatsCluster, stream: string): Promise<string> {
  const nc = await connect(await natsClientOptions(cluster));
  try {
    const jsm = await jetstreamManager(nc);
    for (;;) {
      const leader = (await jsm.streams.info(stream).catch(() => null))?.cluster?.leader;
      if (leader) return leader;
      await sleep(250);
    }
  } finally {
    await nc.close();
  }
}

/** ping() as /health runs it: bounded by the health check's timeout. */
async function healthy(bus: Bus<LoggedEvent>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((r) => (timer = setTimeout(() => r(false), HEALTH_TIMEOUT_MS)));
  const ok = bus.ping().then(
    () => true,
    () => false,
  );
  try {
    return await Promise.race([ok, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

describe('a frozen NATS node (SIGSTOP) is one node’s problem', () => {
  it('instances connected to the other nodes stay healthy; the one on the frozen node moves to another node', async (t) => {
    const cluster = await startNatsCluster(3, { t });
    const buses: Bus<LoggedEvent>[] = [];
    for (const server of cluster.servers) {
      buses.push(await createBus({ kind: 'nats', url: server.url, auth: server.auth, log }));
    }
    t.after(() => Promise.all(buses.map((b) => b.close())));
    for (const bus of buses) assert.equal(await healthy(bus), true);
    const leader = await leaderOf(cluster, 'EVENTS_0');
    const frozen = cluster.servers.find((s) => s.name === leader)!;
    const onFrozen = cluster.servers.indexOf(frozen);
    frozen.freeze();
    const failedSince: (number | null)[] = buses.map(() => null);
    const unhealthyMs = buses.map(() => 0);
    const start = Date.now();
    try {
      while (Date.now() - start < FREEZE_MS) {
        const at = Date.now();
        const results = await Promise.all(buses.map(healthy));
        results.forEach((ok, i) => {
          if (!ok) failedSince[i] ??= at;
          else if (failedSince[i] !== null) {
            unhealthyMs[i]! += Date.now() - failedSince[i]!;
            failedSince[i] = null;
          }
        });
        await sleep(Math.max(0, PROBE_EVERY_MS - (Date.now() - at)));
      }
    } finally {
      frozen.thaw();
    }
    failedSince.forEach((since, i) => {
      if (since !== null) unhealthyMs[i]! += Date.now() - since;
    });
    for (const bus of buses) assert.equal(await healthy(bus), true, 'every instance is healthy once the node wakes');
    unhealthyMs.forEach((ms, i) => {
      if (i !== onFrozen) assert.equal(ms, 0, `instance on ${cluster.servers[i]!.name} unhealthy for ${ms} ms while ${leader} was frozen`);
    });
    assert.ok(
      unhealthyMs[onFrozen]! < 10_000,
      `the instance on the frozen node moved to another node: unhealthy ${unhealthyMs[onFrozen]} ms`,
    );
  });

  it('a probe after a quiet spell is not an outage: the grace counts from the first unreadable probe', async (t) => {
    const cluster = await startNatsCluster(3, { t });
    const admin = await connect(await natsClientOptions(cluster));
    t.after(() => admin.close());
    // One replica: its node alone answers direct gets, so freezing it makes every read hang.
    const jsm = await jetstreamManager(admin);
    const info = await jsm.streams.add({ name: 'PROBED', subjects: ['probed.>'], num_replicas: 1, allow_direct: true });
    const frozen = cluster.servers.find((s) => s.name === info.cluster?.leader)!;
    const other = cluster.servers.find((s) => s !== frozen)!;
    const nc = await connect(await natsClientOptions(other));
    t.after(() => nc.close());
    const graceMs = 1_000;
    const probe = await createHealthProbe(nc, log, [{ stream: 'PROBED', subject: 'probed.health' }], graceMs);
    await probe();
    // Nobody asked for longer than the grace; the last read that worked is that old.
    await sleep(graceMs + 500);
    frozen.freeze();
    try {
      await probe(); // failed before: the stale last read put it past the grace at once
      await sleep(graceMs + 300);
      await assert.rejects(probe(), 'unreadable for longer than the grace: unhealthy');
    } finally {
      frozen.thaw();
    }
    await probe();
  });
});
