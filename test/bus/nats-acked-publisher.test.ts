import assert from 'node:assert/strict';
import { it } from 'node:test';
import { jetstream, jetstreamManager, JetStreamApiError } from '@nats-io/jetstream';
import { connect, TimeoutError } from '@nats-io/transport-node';
import { createAckedPublisher } from '../../src/bus/nats/acked-publisher.js';
import { JetStreamErrorCodes } from '../../src/bus/nats/nats-errors.js';
import { newId } from '../../src/ids.js';
import { natsClientOptions, startNatsServer } from '../helpers/nats-server.js';

it('nats acked publisher - the acks and refusals of js.publish, over one reply subscription', async (t) => {
  const server = await startNatsServer({ t });
  const nc = await connect(await natsClientOptions(server));
  t.after(() => nc.close());
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: 'P', subjects: ['p.>'], duplicate_window: 60_000_000_000 });
  const publisher = createAckedPublisher(nc, { timeoutMs: 5_000 });
  const js = jetstream(nc);

  const id = newId();
  const acks = await Promise.all([
    publisher.publish('p.a', 'one', { msgID: id }),
    publisher.publish('p.b', 'two'),
    js.publish('p.a', 'three'),
  ]);
  assert.deepEqual(
    acks.map((a) => [a.stream, a.seq, a.duplicate]),
    [
      ['P', 1, false],
      ['P', 2, false],
      ['P', 3, false],
    ],
  );
  const again = await publisher.publish('p.a', 'one', { msgID: id });
  assert.deepEqual([again.seq, again.duplicate], [1, true], 'a duplicate id answers with the stored copy');

  const conflict = await publisher.publish('p.a', 'four', { expect: { lastSubjectSequence: 1 } }).catch((err: unknown) => err);
  assert.ok(conflict instanceof JetStreamApiError && conflict.code === JetStreamErrorCodes.WrongLastSequence, String(conflict));
  const chainBroken = await publisher.publish('p.a', 'five', { expect: { lastMsgID: 'not-the-last' } }).catch((err: unknown) => err);
  assert.ok(chainBroken instanceof JetStreamApiError && chainBroken.code === JetStreamErrorCodes.WrongLastMsgId, String(chainBroken));
  const stored = await publisher.publish('p.a', 'six', { expect: { lastSubjectSequence: 3 } });
  assert.equal(stored.seq, 4);
  assert.equal((await jsm.streams.getMessage('P', { seq: 4 }))?.string(), 'six');

  await assert.rejects(publisher.publish('nostream.x', 'x'), /no responders/);
  publisher.close();
  await assert.rejects(publisher.publish('p.a', 'late'), /closed/);
});

it('nats acked publisher - an ack that never comes fails with a TimeoutError; close fails what waits', async (t) => {
  const server = await startNatsServer({ t });
  const nc = await connect(await natsClientOptions(server));
  t.after(() => nc.close());
  nc.subscribe('silent.>', { callback: () => undefined }); // takes the message, never answers
  await nc.flush();
  const publisher = createAckedPublisher(nc, { timeoutMs: 300 });
  const started = Date.now();
  await assert.rejects(publisher.publish('silent.a', 'x'), TimeoutError);
  assert.ok(Date.now() - started < 2_000);
  const waiting = publisher.publish('silent.b', 'y');
  publisher.close();
  await assert.rejects(waiting, /closed/);
});
