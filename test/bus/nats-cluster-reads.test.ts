import assert from 'node:assert/strict';
import { it } from 'node:test';
import { createBus } from '../../src/bus/index.js';
import { newId } from '../../src/ids.js';
import { createLogger } from '../../src/log.js';
import { startNatsCluster } from '../helpers/nats-server.js';

const log = createLogger('silent');
const SESSIONS = 12;
const EVENTS = 20;
const ROUNDS = 25;

/**
 * Issue 13 item 4: reads longer than a few events and findById open an ordered consumer and
 * pull from it at once. On a cluster the consumer may live on another server, whose pull
 * subject reaches the reader's server a moment after the create was answered: the pull got
 * "no responders" and GET /events answered 500.
 */
it('nats event reads on a 3-node cluster - scans right after consumer creation never fail with no responders', async (t) => {
  const cluster = await startNatsCluster(3, { t });
  const writer = await createBus({ kind: 'nats', url: cluster.url, auth: cluster.auth, log });
  t.after(() => writer.close());
  // One reader per server: consumers land anywhere, so some pulls cross to another server.
  const readers = await Promise.all(cluster.servers.map((s) => createBus({ kind: 'nats', url: s.url, auth: cluster.auth, log })));
  t.after(() => Promise.all(readers.map((r) => r.close())));

  const sessions = await Promise.all(
    Array.from({ length: SESSIONS }, async () => {
      const sid = newId();
      const events = Array.from({ length: EVENTS }, (_, i) => ({ id: newId(), type: 'test.event', data: { i } }));
      await writer.events.append(sid, events);
      return { sid, ids: events.map((e) => e.id!) };
    }),
  );

  const failures: string[] = [];
  let reads = 0;
  for (let round = 0; round < ROUNDS; round++) {
    await Promise.all(
      readers.flatMap((r) =>
        sessions.map(async ({ sid, ids }) => {
          try {
            const all = await r.events.read(sid, { limit: 100 });
            assert.equal(all.length, EVENTS);
            const found = await r.events.findById(sid, ids[round % EVENTS]!);
            assert.equal(found?.id, ids[round % EVENTS]);
            reads += 2;
          } catch (err) {
            failures.push(String(err));
          }
        }),
      ),
    );
  }
  assert.deepEqual(failures, [], `${failures.length} of ${reads + failures.length} scans failed`);
});
