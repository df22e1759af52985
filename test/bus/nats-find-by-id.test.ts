import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { createBus } from '../../src/bus/index.js';
import { createEventReader } from '../../src/bus/nats/event-reader.js';
import { PositionIndex } from '../../src/bus/nats/position-index.js';
import { newId } from '../../src/ids.js';
import { createLogger } from '../../src/log.js';
import { natsClientOptions, startNatsServer } from '../helpers/nats-server.js';

const log = createLogger('silent');
const SKEW_MS = 10_000;
const DUPLICATE_WINDOW_MS = 120_000;

/** A UUIDv7 that names `ms` (a writer whose clock is off by that much minted it). */
function idAt(ms: number): string {
  const hex = ms.toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}${newId().slice(13)}`;
}

/**
 * A bus on its own server, a second connection for the reader and the counting, and the subjects
 * of every consumer create the server is asked for (`flush` the connection before reading them).
 */
async function busWithConsumerCreates(t: TestContext) {
  const server = await startNatsServer({ t });
  const bus = await createBus({ kind: 'nats', url: server.url, auth: server.auth, log, shards: 1, findSkewMs: SKEW_MS });
  t.after(() => bus.close());
  const nc = await connect(await natsClientOptions(server));
  t.after(() => nc.close());
  const creates: string[] = [];
  nc.subscribe('$JS.API.CONSUMER.CREATE.>', {
    callback: (_err, m) => {
      creates.push(m.subject);
    },
  });
  return { bus, nc, creates };
}

/**
 * Issue 13: every lookup by id opened an ordered consumer, and on a cluster each consumer create
 * and delete is a meta-group proposal that a restarted node must catch up on. Lookups now walk
 * the session by single gets and open no consumer unless the walk runs out of gets.
 */
test('nats findById and findInDedupWindow - found across the skew window by gets alone, no consumer', async (t) => {
  const { bus, nc, creates } = await busWithConsumerCreates(t);
  const reader = createEventReader({
    js: jetstream(nc),
    jsm: await jetstreamManager(nc),
    shards: 1,
    positions: new PositionIndex(),
    findSkewMs: SKEW_MS,
    duplicateWindowMs: DUPLICATE_WINDOW_MS,
  });

  const sid = newId();
  const quiet = newId();
  const others = [newId(), newId()];
  const now = Date.now();
  // Minted 8 s before the store (a slow writer), 6 s after it (a clock ahead), and 12 s before (outside the margin).
  const late = idAt(now - 8_000);
  const ahead = idAt(now + 6_000);
  const outside = idAt(now - 12_000);
  const ids: string[] = [];
  for (let i = 0; i < 120; i++) {
    // Other sessions' events between this one's, so the stream sequences have gaps.
    await bus.events.append(others[i % 2]!, [{ type: 'noise', data: { i } }]);
    if (i === 50) await bus.events.append(quiet, [{ type: 'e', data: {} }]);
    // One event in ten: a session quieter than a walk's gets (a busy one: the next test).
    if (i % 10 !== 0) continue;
    const id = i === 30 ? late : i === 60 ? ahead : i === 90 ? outside : newId();
    const r = await bus.events.append(sid, [{ id, type: 'e', data: { i } }]);
    assert.ok(r.ok);
    ids.push(id);
  }
  await nc.flush();
  creates.length = 0;

  for (const id of [ids[0]!, late, ahead, ids[5]!, ids.at(-1)!]) {
    assert.equal((await bus.events.findById(sid, id))?.id, id, `findById ${id}`);
    assert.equal((await reader.findInDedupWindow(sid, id))?.event.id, id, `findInDedupWindow ${id}`);
  }
  assert.equal(await bus.events.findById(sid, outside), null, 'an id minted further than the margin before its store is not looked for');
  assert.equal((await reader.findInDedupWindow(sid, outside))?.event.id, outside, 'the duplicate window is searched whole');
  assert.equal(await bus.events.findById(sid, newId()), null);
  assert.equal(await bus.events.findById(quiet, late), null, 'another session');
  await nc.flush();
  assert.deepEqual(creates, [], 'no consumer was created');
});

test('nats findById - a walk longer than its gets finishes on one consumer and still finds the event', async (t) => {
  const { bus, nc, creates } = await busWithConsumerCreates(t);

  const sid = newId();
  // 80 events stored between the id's time and the event itself: more than one walk's gets.
  const slow = idAt(Date.now() - 2_000);
  await bus.events.append(
    sid,
    Array.from({ length: 80 }, (_, i) => ({ type: 'e', data: { i } })),
  );
  await bus.events.append(sid, [{ id: slow, type: 'slow', data: {} }]);
  await nc.flush();
  const found = await bus.events.findById(sid, slow);
  assert.equal(found?.id, slow);
  assert.equal(found?.sequence, 81);
  await nc.flush();
  assert.equal(creates.length, 1);
});
