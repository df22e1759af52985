/**
 * Issue 13, the SIGTERM straggler (bench/README.md, "Fifth run"): an instance stopped while it
 * appended a turn's preamble left the preamble's later ids staged on the replicated stream
 * without their events (its chained publishes refused when applied: server 2.10 stages a msg id
 * before the replicas agree and keeps it for the whole duplicate window). The worker that took
 * the turn re-sent the preamble, got `duplicate: true, seq: 0` for those ids, spent 60 s in
 * append retries and failed with "the stream holds its id but not the event"; the turn ran only
 * once the window had passed. On a real 3-node cluster, the turn must now run within seconds.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jetstream } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import type { SessionEvent } from '../../schemas/events.js';
import type { Bus, EventLog } from '../../src/bus/ports.js';
import { sessionSubjects } from '../../src/bus/nats/topology.js';
import { newId } from '../../src/ids.js';
import { startTestApp } from '../helpers/app.js';
import { natsClientOptions, startNatsCluster } from '../helpers/nats-server.js';
import { assertLogIntegrity, createSession, sendMessage, waitForEvent } from './helpers.js';

/** From the POST to `session.idled`: the append's retry pause, a few appends, the turn. */
const TURN_LIMIT_MS = 8_000;
const PREAMBLE = ['input.message', 'session.started', 'turn.started', 'session.activated'];

describe('a preamble an attempt left half-appended is completed (3 replicas)', () => {
  it('the turn runs within seconds; every preamble event stored once', async (t) => {
    const cluster = await startNatsCluster(3, { t });
    const nc = await connect(await natsClientOptions(cluster));
    t.after(() => nc.close());
    const js = jetstream(nc);
    let died = false;

    /** The first append stores input.message; the chained burst behind it is refused when applied; then the append fails. */
    const dyingAppend = (bus: Bus<SessionEvent>): Bus<SessionEvent> => {
      const log = bus.events;
      const append: EventLog<SessionEvent>['append'] = async (sessionId, events, opts) => {
        if (died || events[0]?.type !== 'input.message') return log.append(sessionId, events, opts);
        died = true;
        assert.ok((await log.append(sessionId, events.slice(0, 1), opts)).ok);
        for (const e of events.slice(1)) {
          await assert.rejects(
            js.publish(sessionSubjects(sessionId, 1).subject, JSON.stringify(e), { msgID: e.id!, expect: { lastMsgID: newId() } }),
            /wrong last msg ID/i,
          );
        }
        throw new Error('the connection was lost mid-append');
      };
      return { ...bus, events: Object.assign(Object.create(log) as EventLog<SessionEvent>, { append }) };
    };

    const app = await startTestApp(t, {
      mode: 'nats',
      natsUrl: cluster.url,
      env: { NATS_EVENT_SHARDS: 1 },
      appOptions: { wrapBus: dyingAppend },
    });
    const { id } = await createSession(app);
    const posted = Date.now();
    assert.equal((await sendMessage(app, id, 'hello')).status, 201, 'the message was accepted');
    const events = await waitForEvent(app, id, 'session.idled', { timeoutMs: TURN_LIMIT_MS });
    assert.ok(died, 'the first append failed mid-way');
    const took = Date.now() - posted;
    assert.ok(took < TURN_LIMIT_MS, `the turn ran in ${took} ms`);
    for (const type of PREAMBLE) assert.equal(events.filter((e) => e.type === type).length, 1, `${type} once`);
    assert.deepEqual(
      events.filter((e) => PREAMBLE.includes(e.type)).map((e) => e.type),
      PREAMBLE,
      'the preamble in order',
    );
    assert.equal(events.filter((e) => e.type === 'turn.completed').length, 1, 'the turn completed');
    assertLogIntegrity(events);
  });
});
