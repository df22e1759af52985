import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { connect } from '@nats-io/transport-node';
import { createBus, type Bus, type FeedHandle, type LoggedEvent } from '../../src/bus/index.js';
import { LiveSubscriptions } from '../../src/bus/nats/live-subscriptions.js';
import type { LiveInput } from '../../src/bus/ordered-feed.js';
import { newId } from '../../src/ids.js';
import { createLogger } from '../../src/log.js';
import { natsClientOptions, startNatsServer, type NatsServer } from '../helpers/nats-server.js';
import { within } from './conformance-events.js';

const log = createLogger('silent');
const FOLLOWER = 'live-subscriptions-follower';

/** The live subjects the server holds for the connection named `name` (its own view: what it sends us). */
async function liveSubjects(server: NatsServer, name: string): Promise<string[]> {
  const res = await fetch(`${server.monitorUrl}/connz?subs=1`);
  const { connections } = (await res.json()) as { connections: { name?: string; subscriptions_list?: string[] }[] };
  const conn = connections.find((c) => c.name === name);
  return (conn?.subscriptions_list ?? []).filter((s) => s.startsWith('live.')).sort();
}

async function until(what: string, cond: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Appends one event to each session in turn until stopped; resolves to the appends per session. */
function appendLoop(writer: Bus<LoggedEvent>, sessions: string[]): { stop(): Promise<void> } {
  let stopped = false;
  const done = (async () => {
    for (let i = 0; !stopped; i++) {
      await writer.events.append(sessions[i % sessions.length]!, [{ type: 'tick', data: { i } }]);
      if (i % sessions.length === 0) await new Promise((r) => setTimeout(r, 2));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await done;
    },
  };
}

async function setUp(t: TestContext, wildcardMinSessions: number) {
  const server = await startNatsServer({ t });
  const bus = (name: string) =>
    createBus({
      kind: 'nats',
      url: server.url,
      auth: server.auth,
      log,
      name,
      liveWildcardMinSessions: wildcardMinSessions,
      livePollMs: 600_000,
    });
  const writer = await bus('live-subscriptions-writer');
  const follower = await bus(FOLLOWER);
  t.after(async () => {
    await follower.close();
    await writer.close();
  });
  return { server, writer, follower };
}

test('nats live subscriptions - followers crossing the wildcard threshold up and down while events are appended get every event once, in order', async (t) => {
  // Up at 4 watched sessions, back below 2.
  const { server, writer, follower } = await setUp(t, 4);
  const sessions = Array.from({ length: 6 }, () => newId());
  for (const sid of sessions) await writer.events.append(sid, [{ type: 'first' }]);
  const seen = new Map<string, number[]>(sessions.map((sid) => [sid, []]));
  const feeds = new Map<string, FeedHandle>();
  const follow = (sid: string) => {
    const got: number[] = [];
    seen.set(sid, got);
    feeds.set(sid, follower.events.follow(sid, { event: (e) => void got.push(e.sequence), end: () => {} }));
  };
  const unfollow = (sid: string) => {
    feeds.get(sid)!.close();
    feeds.delete(sid);
  };
  const subjects = () => liveSubjects(server, FOLLOWER);
  const appends = appendLoop(writer, sessions);
  // A phase lasts 150 ms and until session 0, followed throughout, has received 3 more events:
  // traffic crosses every switch however slowly a loaded machine appends (150 ms alone did not always).
  const phase = async () => {
    const got = () => seen.get(sessions[0]!)!.length;
    const from = got();
    await Promise.all([new Promise((r) => setTimeout(r, 150)), until('session 0 to receive 3 more events', () => got() >= from + 3)]);
  };

  follow(sessions[0]!);
  follow(sessions[1]!);
  await phase();
  assert.equal((await subjects()).length, 2, 'one subscription per session below the threshold');
  follow(sessions[2]!);
  follow(sessions[3]!); // 4: up
  await until('the per-session subscriptions dropped', async () => (await subjects()).join() === 'live.0.*');
  follow(sessions[4]!); // joins the wildcard
  await phase();
  for (const sid of sessions.slice(2, 5)) unfollow(sid); // 2 left: still on the wildcard
  await phase();
  assert.deepEqual(await subjects(), ['live.0.*'], 'hysteresis: 2 is not below half of 4');
  unfollow(sessions[1]!); // 1: down
  await until('back on one subscription per session', async () => (await subjects()).join() === `live.0.${sessions[0]}`);
  follow(sessions[1]!);
  follow(sessions[2]!);
  follow(sessions[3]!); // 4: up again
  await until('on the wildcard again', async () => (await subjects()).join() === 'live.0.*');
  await phase();
  await appends.stop();

  for (const [sid, feed] of feeds) {
    const last = await writer.events.lastSequence(sid);
    const got = seen.get(sid)!;
    await within(
      until(`${sid} to reach ${last}`, () => got.at(-1) === last),
      20_000,
      sid,
    );
    assert.deepEqual(
      got,
      Array.from({ length: last }, (_, i) => i + 1),
      `${sid}: every event once, in order`,
    );
    feed.close();
  }
  // Session 0 was followed through both switches and back up, with events in each of the 4 phases.
  assert.ok(seen.get(sessions[0]!)!.length >= 12, 'session 0 got live events across the switches');
  await until('nothing watched, nothing subscribed', async () => (await subjects()).length === 0);
});

/** A live input that records what reaches it (the feed above it would repair a loss; this shows one). */
class Recorder implements LiveInput {
  readonly sequences: number[] = [];
  failed: Error | null = null;
  push(event: LoggedEvent): void {
    this.sequences.push(event.sequence);
  }
  fail(err: Error): void {
    this.failed = err;
  }
  stale(): void {}
}

test('nats live subscriptions - no live event is lost in a switch, and a session no longer watched gets none from the wildcard', async (t) => {
  const { server, writer } = await setUp(t, 0);
  const name = 'live-subscriptions-raw';
  const nc = await connect(await natsClientOptions(server, { name }));
  t.after(() => nc.close());
  const live = new LiveSubscriptions({ nc, shards: 1, wildcardMinSessions: 3, decode: (_sid, msg) => msg.json<LoggedEvent>() });
  const sessions = Array.from({ length: 4 }, () => newId());
  const recorders = sessions.map(() => new Recorder());
  // Three writers at once: more messages in flight when a switch happens.
  const loops = [appendLoop(writer, sessions), appendLoop(writer, sessions.slice(1)), appendLoop(writer, [sessions[0]!, sessions[3]!])];
  const appends = { stop: () => Promise.all(loops.map((l) => l.stop())) };

  const first = live.listen(sessions[0]!, recorders[0]!);
  await first.ready;
  // Switch up and down a few times: a loss needs a message in flight at the switch.
  for (let cycle = 0; cycle < 8; cycle++) {
    const second = live.listen(sessions[1]!, recorders[1]!);
    const third = live.listen(sessions[2]!, recorders[2]!); // 3: up
    await third.ready;
    await until('on the wildcard', async () => (await liveSubjects(server, name)).join() === 'live.0.*');
    const fourth = live.listen(sessions[3]!, recorders[3]!);
    await fourth.ready;
    await new Promise((r) => setTimeout(r, 20));
    fourth.stop();
    const stoppedAt = recorders[3]!.sequences.length;
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(recorders[3]!.sequences.length, stoppedAt, 'nothing after stop, though the wildcard still carries its events');
    third.stop();
    second.stop(); // 1: down
    await until('off the wildcard', async () => (await liveSubjects(server, name)).join() === `live.0.${sessions[0]}`);
  }
  await appends.stop();
  const last = await writer.events.lastSequence(sessions[0]!);
  await until('session 0 sees its last event', () => recorders[0]!.sequences.at(-1) === last);

  const got = recorders[0]!.sequences;
  for (let i = 1; i < got.length; i++) assert.ok(got[i]! >= got[i - 1]!, `in order at ${i}`);
  const distinct = [...new Set(got)];
  assert.deepEqual(
    distinct,
    Array.from({ length: last - distinct[0]! + 1 }, (_, i) => distinct[0]! + i),
    'no gap across the switches',
  );
  assert.ok(distinct.length > 20);
  assert.ok(recorders.every((r) => r.failed === null));
  first.stop();
  await until('nothing subscribed', async () => (await liveSubjects(server, name)).length === 0);
});
