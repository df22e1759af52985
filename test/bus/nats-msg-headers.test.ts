import assert from 'node:assert/strict';
import { it } from 'node:test';
import { MsgHdrsImpl } from '@nats-io/nats-core';
import { connect, type Msg } from '@nats-io/transport-node';
import { numericHeaders } from '../../src/bus/nats/msg-headers.js';
import { natsClientOptions, startNatsServer } from '../helpers/nats-server.js';

it('nats message headers - numeric headers read from the raw block equal the decoded ones, without decoding the map', async (t) => {
  const server = await startNatsServer({ t });
  const nc = await connect(await natsClientOptions(server));
  t.after(() => nc.close());
  const received: Msg[] = [];
  const sub = nc.subscribe('h.>', {
    max: 4,
    callback: (_err, msg) => {
      received.push(msg);
    },
  });
  const names = ['Nats-Sequence', 'Nats-Last-Sequence'] as const;
  // What a republished event carries: the server's headers, then the publisher's.
  nc.publish('h.1', '{}', {
    headers: MsgHdrsImpl.fromRecord({
      'Nats-Stream': ['EVENTS_0'],
      'Nats-Sequence': ['123456'],
      'Nats-Time-Stamp': ['2026-11-27T22:00:00.1Z'],
      'Nats-Last-Sequence': ['123450'],
      'Sess-Seq': ['7'],
    }),
  });
  nc.publish('h.2', '{}', { headers: MsgHdrsImpl.fromRecord({ 'Nats-Last-Sequence': ['0'] }) });
  nc.publish('h.3', '{}');
  nc.publish('h.4', '{}', { headers: MsgHdrsImpl.fromRecord({ 'Nats-Sequence': ['12x'], 'X-Nats-Sequence': ['5'] }) });
  await sub.closed;

  const read = received.map((m) => numericHeaders(m, names));
  assert.deepEqual(read, [
    [123456, 123450],
    [Number.NaN, 0],
    [Number.NaN, Number.NaN],
    [Number.NaN, Number.NaN],
  ]);
  assert.ok(
    received.every((m) => (m as unknown as { _headers?: unknown })._headers === undefined),
    'the header map was never built',
  );
  // Same answers as the decoded map where a value is a number.
  assert.deepEqual(
    received.slice(0, 2).map((m) => names.map((n) => Number(m.headers?.get(n) || Number.NaN))),
    read.slice(0, 2),
  );
});
