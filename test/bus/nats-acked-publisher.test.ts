import assert from 'node:assert/strict';
import { it } from 'node:test';
import { jetstream, jetstreamManager, JetStreamApiError } from '@nats-io/jetstream';
import { MsgHdrsImpl } from '@nats-io/nats-core';
import { connect, type MsgHdrs, TimeoutError } from '@nats-io/transport-node';
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

  // The caller's headers go out with those of the msg id and the expectation, all stored.
  const callerHeaders = MsgHdrsImpl.fromRecord({ 'Sess-Seq': ['1'] });
  const msgID = newId();
  const withHeaders = await publisher.publish('p.c', 'seven', { msgID, expect: { lastSubjectSequence: 0 }, headers: callerHeaders });
  const header = (await jsm.streams.getMessage('P', { seq: withHeaders.seq }))?.header;
  assert.equal(header?.get('Sess-Seq'), '1');
  assert.equal(header?.get('Nats-Msg-Id'), msgID);
  assert.equal(header?.get('Nats-Expected-Last-Subject-Sequence'), '0');
  // Added to the caller's headers, as js.publish adds them (no copy of the map per publish).
  assert.equal(callerHeaders.get('Nats-Msg-Id'), msgID);
  assert.deepEqual(callerHeaders.keys(), ['Sess-Seq', 'Nats-Msg-Id', 'Nats-Expected-Last-Subject-Sequence']);
  // Headers of another MsgHdrs implementation are copied.
  const foreign = { [Symbol.iterator]: () => [['X-One', ['a']] as [string, string[]]][Symbol.iterator]() } as unknown as MsgHdrs;
  const viaCopy = await publisher.publish('p.c', 'eight', { headers: foreign, expect: { lastSubjectSequence: withHeaders.seq } });
  assert.equal((await jsm.streams.getMessage('P', { seq: viaCopy.seq }))?.header?.get('X-One'), 'a');
  // A header value with a line break would end the header block early: refused, as MsgHdrs.set refuses it.
  await assert.rejects(publisher.publish('p.c', 'x', { msgID: 'a\r\nNats-Rollup: all' }), /cannot contain/);

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

it('nats acked publisher - a publish with a msg id that got no answer is sent again and acked once (a leader lost with it, issue 13)', async (t) => {
  const server = await startNatsServer({ t });
  const nc = await connect(await natsClientOptions(server));
  t.after(() => nc.close());
  // Takes the first copy and never answers, as a stream leader that dies with the message does.
  const swallowed: string[] = [];
  const sub = nc.subscribe('lost.>', { callback: (_err, msg) => void swallowed.push(msg.string()) });
  await nc.flush();
  const publisher = createAckedPublisher(nc, { timeoutMs: 4_000 });
  t.after(() => publisher.close());
  const id = newId();
  const acked = publisher.publish('lost.a', 'x', { msgID: id });
  await new Promise((r) => setTimeout(r, 200));
  // The new leader: the stream now takes the subject.
  sub.unsubscribe();
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: 'L', subjects: ['lost.>'], duplicate_window: 60_000_000_000 });
  const ack = await acked;
  assert.deepEqual([ack.stream, ack.seq, ack.duplicate], ['L', 1, false], 'the resend was stored');
  assert.deepEqual(swallowed, ['x'], 'the first copy went to the dead leader');
  assert.equal((await jsm.streams.info('L')).state.messages, 1, 'stored once');
  // Without a msg id a resend could apply twice: such a publish is never sent again.
  let copies = 0;
  nc.subscribe('mute.>', { callback: () => void copies++ });
  await nc.flush();
  const plain = createAckedPublisher(nc, { timeoutMs: 2_500 });
  t.after(() => plain.close());
  await assert.rejects(plain.publish('mute.a', 'y'), TimeoutError);
  assert.equal(copies, 1, 'sent once');
});
