/**
 * What one leader get costs against one acked publish, client and nats-server CPU per operation:
 * the figure behind the claim check before each append (6 leader gets of a turn-claims record
 * per conversation) and the tail gets (3), against the 22 event publishes. One nats-server 2.10
 * (file storage, R1, as the bench's services run it), this process as the only client:
 *
 *   node --import tsx bench/real-path/leader-get-micro.ts [operations] [in flight]
 *
 * Gets go through the service's `createLeaderGet` (nats.js's STREAM.MSG.GET request, JSON and
 * base64 answer); publishes through its `createAckedPublisher` with a msg id, as events are.
 */
import { dirname } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { createAckedPublisher } from '../../src/bus/nats/acked-publisher.js';
import { createLeaderGet } from '../../src/bus/nats/leader-get.js';
import { startNatsServer } from '../../test/helpers/nats-server.js';
import { cpuDelta, readCpuByCmdline } from '../lib/process.js';

const N = Number(process.argv[2] ?? 20_000);
const IN_FLIGHT = Number(process.argv[3] ?? 50);

/** Client and server CPU per operation, in µs, of `N` runs of `op`, `IN_FLIGHT` at a time. */
async function measure(server: string, op: (i: number) => Promise<unknown>): Promise<{ client: number; server: number }> {
  const server0 = readCpuByCmdline(server);
  const client0 = process.cpuUsage();
  let next = 0;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < N) await op(next++);
    }),
  );
  const c = process.cpuUsage(client0);
  const serverSeconds = cpuDelta(server0, readCpuByCmdline(server));
  return { client: (c.user + c.system) / N, server: (serverSeconds * 1e6) / N };
}

const nats = await startNatsServer();
try {
  // The server's command line names its config, beside its store directory.
  const server = dirname(nats.storeDir);
  const nc = await connect({ servers: nats.url, noAsyncTraces: true });
  const jsm = await jetstreamManager(nc);
  const kv = await new Kvm(nc).create('micro_claims', { history: 1 });
  await kv.put('s1', JSON.stringify({ turn_id: 't', delivery: 1, worker: 'w', token: 'x' }));
  await jsm.streams.add({ name: 'MICRO_EVENTS', subjects: ['mevt.>'], duplicate_window: 120_000_000_000 });
  const get = await createLeaderGet(nc, { timeoutMs: 5_000 });
  const publisher = createAckedPublisher(nc, { timeoutMs: 5_000 });
  const payload = new TextEncoder().encode(JSON.stringify({ type: 'output.message.completed', data: { text: 'x'.repeat(300) } }));
  for (let pass = 1; pass <= 2; pass++) {
    const g = await measure(server, () => get('KV_micro_claims', { last_by_subj: '$KV.micro_claims.s1' }));
    const p = await measure(server, (i) => publisher.publish(`mevt.${i % 1000}`, payload, { msgID: `${pass}-${i}` }));
    process.stdout.write(
      `pass ${pass} (${N} each, ${IN_FLIGHT} in flight): leader get ${g.client.toFixed(1)} µs client + ${g.server.toFixed(1)} µs nats-server; ` +
        `acked publish ${p.client.toFixed(1)} + ${p.server.toFixed(1)} µs\n`,
    );
  }
  publisher.close();
  await nc.close();
} finally {
  await nats.stop();
}
