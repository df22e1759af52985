import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestApp, type TestApp } from '../../helpers/app.js';
import { openSse } from '../../helpers/sse-client.js';
import { exampleEvents, newSession } from './helpers.js';
import { rawLog } from '../../helpers/raw-log.js';

const TOTAL = 2000;

/** Appends TOTAL-1 events (after session.created) in small batches over at least ~2.4 s, so readers cycle. */
async function writer(app: TestApp, sid: string): Promise<void> {
  for (let i = 1; i < TOTAL; i += 10) {
    const batch = Array.from({ length: Math.min(10, TOTAL - i) }, (_, k) => ({ type: 'output.message.delta', data: { n: i + k } }));
    await rawLog(app.app.services.bus.events).append(sid, batch);
    await sleep(12);
  }
}

/**
 * Reads the stream like a well-behaved client: on `disconnecting` or a dropped connection it
 * reconnects at once with since_id = the last id it saw. `killAt` drops the connection itself
 * at random points (a client killed mid-stream). Returns the sequences seen, in order.
 */
async function reader(app: TestApp, base: string, sid: string, killAt: () => boolean): Promise<{ seqs: number[]; connections: number }> {
  const seqs: number[] = [];
  let lastId: string | undefined;
  let connections = 0;
  while (seqs.length < TOTAL) {
    const url = `${base}/v1/sessions/${sid}/sse${lastId ? `?since_id=${lastId}` : ''}`;
    const conn = await openSse(url, { key: app.adminKey });
    connections++;
    assert.equal(conn.status, 200);
    let seen = 1; // skip `connected`
    const pump = async () => {
      for (;;) {
        while (seen < conn.events.length) {
          const e = conn.events[seen++]!;
          if (e.event === 'disconnecting') return;
          seqs.push(JSON.parse(e.data).sequence);
          lastId = e.id;
          if (seqs.length >= TOTAL) return;
          if (killAt()) return;
        }
        const more = await Promise.race([
          conn
            .waitFor(() => true, seen + 1, 3000)
            .then(
              () => true,
              () => false,
            ),
          conn.done.then(() => false),
        ]);
        if (!more && seen >= conn.events.length) return;
      }
    };
    await pump();
    conn.close();
  }
  return { seqs, connections };
}

describe('SSE resume correctness', () => {
  it(`a client cycling every ~1 s sees all ${TOTAL} events exactly once, in order; also when killed at random points`, async (t) => {
    const app = await startTestApp(t, { env: { SSE_CYCLE_MS: 1000, SSE_HEARTBEAT_MS: 200 } });
    const sid = await newSession(app);
    let rnd = 42;
    const random = () => (rnd = (rnd * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const [, cycling, killed] = await Promise.all([
      writer(app, sid),
      reader(app, app.url, sid, () => false),
      reader(app, app.url, sid, () => random() < 0.01),
    ]);
    const expected = Array.from({ length: TOTAL }, (_, i) => i + 1);
    assert.deepEqual(cycling.seqs, expected);
    assert.deepEqual(killed.seqs, expected);
    assert.ok(cycling.connections >= 2, `cycled ${cycling.connections} times`);
    assert.ok(killed.connections > cycling.connections, `killed client reconnected ${killed.connections} times`);
  });

  // Local bus: instance B learns of A's appends from its one tail poll for all watched sessions.
  for (const mode of ['nats', 'postgres'] as const) {
    it(`events appended through instance A reach an SSE client on instance B (${mode === 'nats' ? 'NATS' : 'PostgreSQL, local bus'})`, async (t) => {
      const a = await startTestApp(t, { mode });
      const b = await startTestApp(t, { mode, databaseUrl: a.databaseUrl, natsUrl: a.natsUrl });
      const sid = await newSession(a);
      const conn = await openSse(`${b.url}/v1/sessions/${sid}/sse`, { key: b.adminKey });
      t.after(() => conn.close());
      await conn.waitFor((e) => e.event === 'session.created');
      await rawLog(a.app.services.bus.events).append(sid, exampleEvents('session.started', 'turn.started'));
      const got = await conn.waitFor((e) => e.event === 'turn.started');
      assert.equal(JSON.parse(got[0]!.data).sequence, 3);
      const listing = await b.request('GET', `/v1/sessions/${sid}/events`);
      assert.deepEqual(
        listing.body.data.map((e: { sequence: number }) => e.sequence),
        [1, 2, 3],
      );
    });
  }
});
