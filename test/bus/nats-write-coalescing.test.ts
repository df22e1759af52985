import assert from 'node:assert/strict';
import { test } from 'node:test';
import { connect } from '@nats-io/transport-node';
import type { Socket } from 'node:net';
import { coalesceSocketWrites } from '../../src/bus/nats/write-coalescing.js';
import { natsClientOptions, startNatsServer } from '../helpers/nats-server.js';

test('nats write coalescing - messages sent from many continuations of one event-loop turn leave in one write, and all are answered', async (t) => {
  const server = await startNatsServer({ t });
  const nc = await connect(await natsClientOptions(server));
  t.after(() => nc.close());
  assert.equal(coalesceSocketWrites(nc), true);
  const responder = await connect(await natsClientOptions(server));
  t.after(() => responder.close());
  responder.subscribe('echo', {
    callback: (_err, m) => {
      m.respond(m.data);
    },
  });
  await responder.flush();

  const socket = (nc as unknown as { protocol: { transport: { socket: Socket } } }).protocol.transport.socket;
  let writes = 0;
  const countWrites = (name: '_write' | '_writev') => {
    const original = socket[name] as (...args: unknown[]) => void;
    (socket as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => {
      writes++;
      original.apply(socket, args);
    };
  };
  countWrites('_write');
  countWrites('_writev');

  // Each request starts after a different number of awaits, so without corking nats.js flushes
  // its buffer several times (on a microtask after the first message into an empty buffer).
  const replies = await new Promise<string[]>((resolve, reject) => {
    setImmediate(() => {
      Promise.all(
        Array.from({ length: 50 }, async (_, i) => {
          for (let k = 0; k < i % 7; k++) await Promise.resolve();
          return new TextDecoder().decode((await nc.request('echo', String(i), { timeout: 5000 })).data);
        }),
      ).then(resolve, reject);
    });
  });
  assert.deepEqual(
    replies,
    Array.from({ length: 50 }, (_, i) => String(i)),
  );
  assert.equal(writes, 1, `${writes} socket writes for 50 requests made in one event-loop turn`);
});
