import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { JetStreamApiError, type JetStreamClient, type PubAck } from '@nats-io/jetstream';
import { createBus } from '../../src/bus/index.js';
import { publishRound } from '../../src/bus/nats/event-append.js';
import { JetStreamErrorCodes } from '../../src/bus/nats/nats-errors.js';
import { sessionSubjects } from '../../src/bus/nats/topology.js';
import type { LoggedEvent } from '../../src/bus/ports.js';
import { newId } from '../../src/ids.js';
import { createLogger } from '../../src/log.js';
import { startNatsServer } from '../helpers/nats-server.js';
import { racePreamble } from './preamble-race.js';

const log = createLogger('silent');

function refusal(code: number): JetStreamApiError {
  return new JetStreamApiError({ code: 400, err_code: code, description: `refused ${code}` });
}

/** A JetStreamClient whose publishes answer from a script, in call order; records the expectations sent. */
function scriptedJs(script: (PubAck | Error)[]) {
  const sent: { subject: string; expect: unknown; msgID?: string; event: LoggedEvent }[] = [];
  const js = {
    publish(subject: string, data: string, opts: { expect: unknown; msgID?: string }) {
      sent.push({ subject, expect: opts.expect, msgID: opts.msgID, event: JSON.parse(data) as LoggedEvent });
      const next = script[sent.length - 1]!;
      return next instanceof Error ? Promise.reject(next) : Promise.resolve(next);
    },
  } as unknown as JetStreamClient;
  return { js, sent };
}

const ack = (seq: number, duplicate = false): PubAck => ({ stream: 'EVENTS_0', seq, duplicate }) as PubAck;

describe('nats event append - one round (scripted acks)', () => {
  const sid = newId();
  const where = sessionSubjects(sid, 1);
  const tail = { sequence: 4, streamSeq: 40, id: newId() };
  const run = [{ type: 'a' }, { type: 'b' }, { type: 'c' }];
  const deps = (
    js: JetStreamClient,
    stored: [number, number][] = [],
    copies: Record<number, LoggedEvent> = {},
    inWindow: (id: string) => { event: LoggedEvent; streamSeq: number } | null = () => null,
  ) => ({
    js,
    reader: {
      getByStreamSeq: async (_stream: string, seq: number) => copies[seq] ?? null,
      findInDedupWindow: async (_sid: string, id: string) => inWindow(id),
    },
    onStored: (e: LoggedEvent, seq: number) => stored.push([e.sequence, seq]),
  });

  it('the first event expects the tail, each later one its predecessor; all numbered in advance', async () => {
    const { js, sent } = scriptedJs([ack(41), ack(42), ack(43)]);
    const stored: [number, number][] = [];
    const r = await publishRound(deps(js, stored), sid, where, run, tail);
    assert.equal(r.type, 'stored');
    assert.deepEqual(
      sent.map((s) => s.expect),
      [{ lastSubjectSequence: 40 }, { lastMsgID: sent[0]!.event.id }, { lastMsgID: sent[1]!.event.id }],
    );
    assert.deepEqual(
      sent.map((s) => s.event.sequence),
      [5, 6, 7],
    );
    assert.deepEqual(stored, [
      [5, 41],
      [6, 42],
      [7, 43],
    ]);
    assert.ok(r.type === 'stored' && r.wrote && r.events.length === 3);
  });

  it('a broken chain ends the round at the refused event', async () => {
    const { js } = scriptedJs([ack(41), refusal(JetStreamErrorCodes.WrongLastMsgId), refusal(JetStreamErrorCodes.WrongLastMsgId)]);
    const r = await publishRound(deps(js), sid, where, run, tail);
    assert.ok(r.type === 'stored');
    assert.deepEqual(
      r.events.map((e) => e.type),
      ['a'],
    );
  });

  it('a refused first event stores nothing: the caller reloads the tail', async () => {
    const { js } = scriptedJs([
      refusal(JetStreamErrorCodes.WrongLastSequence),
      refusal(JetStreamErrorCodes.WrongLastMsgId),
      refusal(JetStreamErrorCodes.WrongLastMsgId),
    ]);
    const r = await publishRound(deps(js), sid, where, run, tail);
    assert.equal(r.type, 'refused');
  });

  it('an event stored after a refused predecessor is reported, not passed over', async () => {
    const { js } = scriptedJs([refusal(JetStreamErrorCodes.WrongLastSequence), ack(50), refusal(JetStreamErrorCodes.WrongLastMsgId)]);
    await assert.rejects(publishRound(deps(js), sid, where, run, tail), /predecessor was refused/);
  });

  it('a duplicate hands back the stored copy; an event chained onto a copy numbered differently is reported', async () => {
    const headId = newId();
    const runWithId = [{ id: headId, type: 'a' }, { type: 'b' }];
    const sameNumber = stampedCopy(headId, 5);
    const ok = await publishRound(deps(scriptedJs([ack(30, true), ack(44)]).js, [], { 30: sameNumber }), sid, where, runWithId, tail);
    assert.ok(ok.type === 'stored' && ok.events[0] === sameNumber && ok.events[1]!.sequence === 6);
    const otherNumber = stampedCopy(headId, 2);
    await assert.rejects(
      publishRound(deps(scriptedJs([ack(30, true), ack(44)]).js, [], { 30: otherNumber }), sid, where, runWithId, tail),
      /numbered differently/,
    );
  });

  it('a seq-0 duplicate hands back a copy stored within the dedup window; with none the event goes out under a msg id of its own and OCC', async () => {
    const headId = newId();
    const runWithId = [{ id: headId, type: 'a' }, { type: 'b' }];
    const copy = stampedCopy(headId, 5);
    const looked: string[] = [];
    const later = (id: string) => (looked.push(id), id === headId ? { event: copy, streamSeq: 43 } : null);
    const stored: [number, number][] = [];
    const ok = await publishRound(deps(scriptedJs([ack(0, true), ack(44)]).js, stored, {}, later), sid, where, runWithId, tail);
    assert.ok(ok.type === 'stored' && ok.events[0] === copy && ok.events[1]!.sequence === 6);
    assert.deepEqual(looked, [headId], 'looked the id up');
    assert.deepEqual(stored, [[6, 44]]);

    // The stream staged the id and refused its publish: ours is stored under another msg id.
    const staged = scriptedJs([ack(0, true), refusal(JetStreamErrorCodes.WrongLastMsgId), ack(41)]);
    const fresh = await publishRound(deps(staged.js, stored), sid, where, runWithId, tail);
    assert.ok(fresh.type === 'stored' && fresh.wrote);
    assert.deepEqual(
      fresh.events.map((e) => [e.id, e.sequence]),
      [[headId, 5]],
    );
    assert.deepEqual(staged.sent[2]!.expect, { lastSubjectSequence: 40 }, 'under OCC on the tail');
    assert.ok(staged.sent[2]!.msgID?.startsWith(`${headId}.`), `a msg id of its own: ${staged.sent[2]!.msgID}`);

    // Someone appended meanwhile: a refusal like any other, nothing stored.
    const moved = scriptedJs([ack(0, true), refusal(JetStreamErrorCodes.WrongLastMsgId), refusal(JetStreamErrorCodes.WrongLastSequence)]);
    assert.equal((await publishRound(deps(moved.js), sid, where, runWithId, tail)).type, 'refused');
  });

  it('a follower whose fate is unknown (timeout) fails the append', async () => {
    const { js } = scriptedJs([ack(41), new Error('TIMEOUT'), refusal(JetStreamErrorCodes.WrongLastMsgId)]);
    await assert.rejects(publishRound(deps(js), sid, where, run, tail), /TIMEOUT/);
  });

  function stampedCopy(id: string, sequence: number): LoggedEvent {
    return { id, type: 'a', ts: new Date().toISOString(), session_id: sid, sequence, context: {}, data: {} };
  }
});

describe('nats event append - against a server', () => {
  it('batches from two connections racing on one session: contiguous, each event once, each batch in order', async (t) => {
    const server = await startNatsServer({ t });
    const buses = [
      await createBus({ kind: 'nats', url: server.url, auth: server.auth, log }),
      await createBus({ kind: 'nats', url: server.url, auth: server.auth, log }),
    ];
    t.after(() => Promise.all(buses.map((b) => b.close())));
    const sid = newId();
    const batches = 40;
    const size = 6;
    await Promise.all(
      buses.map(async (bus, w) => {
        for (let b = 0; b < batches; b++) {
          const r = await bus.events.append(
            sid,
            Array.from({ length: size }, (_, i) => ({ id: newId(), type: 'e', data: { w, b, i } })),
            { newIds: true },
          );
          assert.ok(r.ok);
          assert.deepEqual(
            r.events.map((e) => e.data['i']),
            [0, 1, 2, 3, 4, 5],
          );
        }
      }),
    );
    const all = await buses[0]!.events.read(sid, { limit: 10_000 });
    assert.deepEqual(
      all.map((e) => e.sequence),
      Array.from({ length: 2 * batches * size }, (_, i) => i + 1),
    );
    assert.equal(new Set(all.map((e) => e.id)).size, all.length, 'no id twice');
    for (let w = 0; w < 2; w++) {
      const mine = all.filter((e) => e.data['w'] === w).map((e) => `${String(e.data['b'])}.${String(e.data['i'])}`);
      assert.deepEqual(
        mine,
        Array.from({ length: batches * size }, (_, k) => `${Math.floor(k / size)}.${k % size}`),
        `writer ${w} in order`,
      );
    }
  });

  it('a writer with a stale expectation stores none of its batch (its cached tail is stale too)', async (t) => {
    const server = await startNatsServer({ t });
    const [a, b] = [
      await createBus({ kind: 'nats', url: server.url, auth: server.auth, log }),
      await createBus({ kind: 'nats', url: server.url, auth: server.auth, log }),
    ];
    t.after(() => Promise.all([a.close(), b.close()]));
    const sid = newId();
    assert.ok((await a.events.append(sid, [{ type: 'one' }, { type: 'two' }])).ok);
    assert.ok((await b.events.append(sid, [{ type: 'three' }], { expectedSequence: 2 })).ok);
    const stale = await a.events.append(
      sid,
      Array.from({ length: 5 }, () => ({ id: newId(), type: 'stale' })),
      { expectedSequence: 2, newIds: true },
    );
    assert.deepEqual(stale, { ok: false, currentSequence: 3 });
    assert.deepEqual(
      (await b.events.read(sid)).map((e) => e.type),
      ['one', 'two', 'three'],
    );
  });
});

describe('nats event append - shared ids and reads of our own appends', () => {
  it('a batch two writers append at once (the API preamble and a worker re-sending it): each event once, contiguous, in order', async (t) => {
    const server = await startNatsServer({ t });
    const [a, b] = [
      await createBus({ kind: 'nats', url: server.url, auth: server.auth, log }),
      await createBus({ kind: 'nats', url: server.url, auth: server.auth, log }),
    ];
    t.after(() => Promise.all([a.close(), b.close()]));
    for (let s = 0; s < 30; s++) await racePreamble([a, b]);
  });

  it('a shared batch whose first events are stored already is completed behind them', async (t) => {
    const server = await startNatsServer({ t });
    const bus = await createBus({ kind: 'nats', url: server.url, auth: server.auth, log });
    t.after(() => bus.close());
    const sid = newId();
    const batch = ['a', 'b', 'c', 'd'].map((type) => ({ id: newId(), type }));
    assert.ok((await bus.events.append(sid, batch.slice(0, 2))).ok);
    const r = await bus.events.append(sid, batch);
    assert.ok(r.ok);
    assert.deepEqual(
      r.events.map((e) => [e.type, e.sequence]),
      [
        ['a', 1],
        ['b', 2],
        ['c', 3],
        ['d', 4],
      ],
    );
    assert.deepEqual(
      (await bus.events.read(sid)).map((e) => e.type),
      ['a', 'b', 'c', 'd'],
    );
  });

  it('reads behind our own appends equal the server copy; another writer appending sends them to the server', async (t) => {
    const server = await startNatsServer({ t });
    const [a, b] = [
      await createBus({ kind: 'nats', url: server.url, auth: server.auth, log }),
      await createBus({ kind: 'nats', url: server.url, auth: server.auth, log }),
    ];
    t.after(() => Promise.all([a.close(), b.close()]));
    const sid = newId();
    assert.ok((await a.events.append(sid, [{ type: 'one', data: { n: 1 } }, { type: 'two' }])).ok);
    assert.ok(
      (
        await a.events.append(
          sid,
          Array.from({ length: 3 }, (_, i) => ({ id: newId(), type: 'mine', data: { i } })),
          { newIds: true },
        )
      ).ok,
    );
    assert.deepEqual(await a.events.read(sid, { afterSequence: 1 }), await b.events.read(sid, { afterSequence: 1 }));
    assert.deepEqual(await a.events.read(sid, { afterSequence: 2, limit: 2 }), await b.events.read(sid, { afterSequence: 2, limit: 2 }));
    assert.ok((await b.events.append(sid, [{ type: 'theirs' }])).ok);
    const seen = await a.events.read(sid, { afterSequence: 4 });
    assert.deepEqual(
      seen.map((e) => [e.type, e.sequence]),
      [
        ['mine', 5],
        ['theirs', 6],
      ],
    );
  });
});
