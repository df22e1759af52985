import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ReconnectReason, SessionEvent } from '@agent-session-service/client';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { clientOf, killingFetch, newSession } from './helpers.js';
import { rawLog } from '../helpers/raw-log.js';

const TOTAL = 400;

/** Appends events 2..TOTAL (1 is session.created) in small batches over ~2 s, so readers cycle. */
async function writer(app: TestApp, sid: string): Promise<void> {
  for (let i = 2; i <= TOTAL; i += 8) {
    const batch = Array.from({ length: Math.min(8, TOTAL - i + 1) }, (_, k) => ({
      type: 'output.message.delta',
      data: { turn_id: 't', delta: String(i + k), accumulated: '' },
    }));
    await rawLog(app.app.services.bus.events).append(sid, batch);
    await sleep(40);
  }
}

/** Reads the stream until TOTAL events; returns their sequences and why it reconnected. */
async function read(stream: AsyncIterable<SessionEvent>, reasons: ReconnectReason[]): Promise<number[]> {
  const seqs: number[] = [];
  for await (const e of stream) {
    seqs.push(e.sequence);
    if (seqs.length === TOTAL) break;
  }
  assert.ok(reasons.length >= 0);
  return seqs;
}

const expected = Array.from({ length: TOTAL }, (_, i) => i + 1);

describe('client: sessions.stream()', () => {
  it('across forced cycles and killed connections: every event exactly once, in order', async (t) => {
    const app = await startTestApp(t, { env: { SSE_CYCLE_MS: 300, SSE_HEARTBEAT_MS: 100 } });
    const client = clientOf(app);
    const sid = await newSession(client);
    let rnd = 7;
    const random = () => (rnd = (rnd * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const killer = killingFetch(() => 1 + Math.floor(random() * 6));
    const killed = clientOf(app, killer.fetch);
    const cycleReasons: ReconnectReason[] = [];
    const killReasons: ReconnectReason[] = [];
    const cycling = client.sessions.stream(sid, { onReconnect: (i) => cycleReasons.push(i.reason) });
    const dropping = killed.sessions.stream(sid, { backoff: { initialMs: 10, maxMs: 50 }, onReconnect: (i) => killReasons.push(i.reason) });
    const [, a, b] = await Promise.all([writer(app, sid), read(cycling, cycleReasons), read(dropping, killReasons)]);
    assert.deepEqual(a, expected);
    assert.deepEqual(b, expected);
    assert.ok(cycleReasons.filter((r) => r === 'disconnecting').length >= 2, `cycled: ${cycleReasons.join(',')}`);
    assert.ok(killer.kills() >= 5, `killed ${killer.kills()} times`);
    assert.ok(killReasons.filter((r) => r === 'network').length >= 5, `reasons: ${killReasons.join(',')}`);
    assert.equal(cycling.lastEventId, await client.sessions.lastEventId(sid));
  });

  it('since, types and exclude: resumes after the given id with the filter applied on every connection', async (t) => {
    const app = await startTestApp(t, { env: { SSE_CYCLE_MS: 200, SSE_HEARTBEAT_MS: 50 } });
    const client = clientOf(app);
    const sid = await newSession(client);
    const first = await client.sessions.lastEventId(sid);
    const types = ['output.message.delta', 'turn.started'] as const;
    const events = client.sessions.stream(sid, { since: first, types: [...types], exclude: ['turn.started'] });
    const seen: string[] = [];
    const done = (async () => {
      for await (const e of events) {
        assert.equal(e.type, 'output.message.delta');
        if (e.type === 'output.message.delta') seen.push(e.data.delta); // narrowed by the union
        if (seen.length === 6) break;
      }
    })();
    for (let i = 0; i < 6; i++) {
      await rawLog(app.app.services.bus.events).append(sid, [
        { type: 'turn.started', data: { turn_id: `t${i}`, input_message_id: 'm' } },
        { type: 'output.message.delta', data: { turn_id: `t${i}`, delta: `d${i}`, accumulated: '' } },
      ]);
      await sleep(120);
    }
    await done;
    assert.deepEqual(seen, ['d0', 'd1', 'd2', 'd3', 'd4', 'd5']);
    assert.ok(events.connections >= 2, `connections: ${events.connections}`);
    assert.throws(() => events[Symbol.asyncIterator](), /iterated once/);
  });

  it('stream-token auth: an expired token is replaced by a new one and the stream resumes without loss', async (t) => {
    const app = await startTestApp(t, { env: { SSE_CYCLE_MS: 300, SSE_HEARTBEAT_MS: 100, STREAM_TOKEN_TTL_S: 1 } });
    let mints = 0;
    let headerAuth = 0;
    const counting: typeof fetch = async (input, init) => {
      const url = String(input instanceof Request ? input.url : input);
      if (url.endsWith('/stream-token')) mints++;
      if (url.includes('/sse') && new Headers(init?.headers).has('authorization')) headerAuth++;
      return fetch(input, init);
    };
    const client = clientOf(app, counting);
    const sid = await newSession(client);
    const reasons: ReconnectReason[] = [];
    const stream = client.sessions.stream(sid, { auth: 'stream-token', onReconnect: (i) => reasons.push(i.reason) });
    const [, seqs] = await Promise.all([writer(app, sid), read(stream, reasons)]);
    assert.deepEqual(seqs, expected);
    assert.ok(mints >= 2, `minted ${mints} tokens`);
    assert.ok(reasons.includes('token_expired'), reasons.join(','));
    assert.equal(headerAuth, 0, 'the stream itself never sends the key');
  });

  it('a 404 session ends the iteration with ApiError; close() ends it quietly', async (t) => {
    const app = await startTestApp(t);
    const client = clientOf(app);
    await assert.rejects(
      async () => {
        for await (const _ of client.sessions.stream('0195f3c0-8a2b-7c3d-9e4f-5a6b7c8d9e0f')) break;
      },
      (err: Error & { status?: number }) => err.name === 'ApiError' && err.status === 404,
    );
    const sid = await newSession(client);
    const stream = client.sessions.stream(sid);
    const types: string[] = [];
    setTimeout(() => stream.close(), 300);
    for await (const e of stream) types.push(e.type);
    assert.deepEqual(types, ['session.created']);
    assert.equal(await stream.closed(), undefined);
  });

  it('a connection that goes quiet (no heartbeat within readTimeoutMs) is replaced, without loss', async (t) => {
    const app = await startTestApp(t, { env: { SSE_HEARTBEAT_MS: 60_000 } });
    let stalled = 0;
    // The first connection answers `connected` and then nothing, like a proxy that stopped forwarding.
    const stalling: typeof fetch = async (input, init) => {
      const url = String(input instanceof Request ? input.url : input);
      if (!url.includes('/sse') || stalled++ > 0) return fetch(input, init);
      const body = new ReadableStream<Uint8Array>({ start: (c) => c.enqueue(new TextEncoder().encode('event: connected\ndata: {}\n\n')) });
      return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
    };
    const client = clientOf(app, stalling);
    const sid = await newSession(client);
    const reasons: ReconnectReason[] = [];
    const types: string[] = [];
    for await (const e of client.sessions.stream(sid, { readTimeoutMs: 300, onReconnect: (i) => reasons.push(i.reason) })) {
      types.push(e.type);
      break;
    }
    assert.deepEqual(types, ['session.created']);
    assert.deepEqual(reasons, ['read_timeout']);
  });
});
