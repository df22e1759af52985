import assert from 'node:assert/strict';
import { it } from 'node:test';
import { createBus, eventJson, type LoggedEvent } from '../../src/bus/index.js';
import { newId } from '../../src/ids.js';
import { createLogger } from '../../src/log.js';
import { startNatsServer } from '../helpers/nats-server.js';

const log = createLogger('silent');

async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(cond(), 'timed out');
}

it('nats live events: an event appended here arrives live as the appended object, its stored JSON reused; another writer’s is decoded', async (t) => {
  const server = await startNatsServer({ t });
  const [a, b] = [
    await createBus({ kind: 'nats', url: server.url, auth: server.auth, log }),
    await createBus({ kind: 'nats', url: server.url, auth: server.auth, log }),
  ];
  t.after(() => Promise.all([a.close(), b.close()]));
  const sid = newId();
  const seen: LoggedEvent[] = [];
  const feed = a.events.follow(sid, { event: (e) => void seen.push(e), end: () => undefined });
  t.after(() => feed.close());

  const ours = await a.events.append(sid, [
    { type: 'one', data: { text: 'ünïcode ✓ \u2028 "quoted"\n' } },
    { type: 'two', data: { n: 2 }, tags: ['x'] },
  ]);
  assert.ok(ours.ok);
  await until(() => seen.length === 2);
  assert.equal(seen[0], ours.events[0], 'the appended object, not a decoded copy');
  assert.equal(seen[1], ours.events[1]);

  const theirs = await b.events.append(sid, [{ type: 'three', data: { n: 3 } }]);
  assert.ok(theirs.ok);
  await until(() => seen.length === 3);
  assert.notEqual(seen[2], theirs.events[0], 'another process: decoded from the message');

  // Whichever way each arrived, it is what the log stores, and its JSON is the stored text.
  const stored = await b.events.read(sid);
  assert.deepEqual(seen, stored);
  for (const [i, e] of seen.entries()) {
    assert.equal(eventJson(e), JSON.stringify(stored[i]));
    assert.equal(eventJson(e), JSON.stringify(e));
  }
  assert.deepEqual(
    seen.map((e) => [e.type, e.sequence]),
    [
      ['one', 1],
      ['two', 2],
      ['three', 3],
    ],
  );
});
