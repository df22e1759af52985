import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { formatSseFrame } from '../../src/http/sse-frame.js';
import { SseStream, type SseSink } from '../../src/http/sse-stream.js';
import { TimerWheel } from '../../src/timers/index.js';
import { VirtualSseTimers } from '../helpers/virtual-sse-timers.js';

function fakeSink(accept = () => true) {
  const chunks: string[] = [];
  const state = { ended: false, aborted: false };
  const sink: SseSink = {
    write: (c) => {
      chunks.push(c);
      return accept();
    },
    end: () => {
      state.ended = true;
    },
    abort: () => {
      state.aborted = true;
    },
  };
  return { sink, chunks, state };
}

describe('SSE frames and streams', () => {
  it('formats frames with id, event and one data line per line', () => {
    assert.equal(formatSseFrame({ id: 'a', event: 't', data: 'x\ny' }), 'id: a\nevent: t\ndata: x\ndata: y\n\n');
    assert.equal(formatSseFrame({ event: 't', data: 'x\r\ny\rz' }), 'event: t\ndata: x\ndata: y\ndata: z\n\n');
    assert.equal(formatSseFrame({ event: 't', data: '{"a":"b\\nc"}' }), 'event: t\ndata: {"a":"b\\nc"}\n\n');
    assert.equal(formatSseFrame({ event: 't', data: '' }), 'event: t\ndata: \n\n');
    assert.throws(() => formatSseFrame({ id: 'a\nb', event: 't', data: '' }));
  });

  it('sends heartbeats whose retry hint backs off from 100 to 500 while idle, and resets on events', async () => {
    const { sink, chunks } = fakeSink();
    const s = new SseStream(
      sink,
      { heartbeatMs: 20, cycleMs: 60_000, maxBufferBytes: 1e6, random: () => 0.999 },
      new TimerWheel({ shortestMs: 20 }),
    );
    await sleep(130);
    const beats = chunks.filter((c) => c.includes(': heartbeat'));
    assert.ok(beats.length >= 4, `got ${beats.length} heartbeats`);
    assert.deepEqual(
      beats.slice(0, 4).map((b) => Number(/retry: (\d+)/.exec(b)![1])),
      [100, 200, 400, 500],
    );
    s.send(formatSseFrame({ id: '1', event: 'x', data: '{}' }));
    assert.match(chunks.at(-1)!, /^retry: 100\nid: 1\n/);
    s.end();
  });

  it('runs every close cleanup once, in the order registered; one registered after the close runs at once', () => {
    for (const n of [1, 2, 3]) {
      const { sink } = fakeSink();
      const s = new SseStream(sink, { heartbeatMs: 10_000, cycleMs: 3_600_000, maxBufferBytes: 1e6 }, new TimerWheel({ shortestMs: 1000 }));
      const ran: string[] = [];
      for (let i = 0; i < n; i++) s.onClose((stream) => ran.push(`${i}:${stream === s}`));
      s.end();
      s.closed();
      assert.deepEqual(
        ran,
        Array.from({ length: n }, (_, i) => `${i}:true`),
      );
      s.onClose(() => ran.push('late'));
      assert.equal(ran.at(-1), 'late');
    }
  });

  it('cycles the connection with a disconnecting frame inside ±20% of the cycle', async () => {
    const { sink, chunks, state } = fakeSink();
    const closed: string[] = [];
    const s = new SseStream(
      sink,
      { heartbeatMs: 10_000, cycleMs: 100, maxBufferBytes: 1e6, random: () => 0 },
      new TimerWheel({ shortestMs: 80 }),
    );
    s.onClose(() => closed.push('closed'));
    await sleep(70);
    assert.equal(state.ended, false, 'not before 80% of the cycle');
    await sleep(40);
    assert.equal(state.ended, true);
    assert.equal(s.open, false);
    assert.deepEqual(closed, ['closed']);
    assert.match(chunks.at(-1)!, /event: disconnecting\ndata: {"reason":"connection_cycle","retry_ms":100}/);
  });

  it('streams sharing one timer wheel each beat on their own schedule and cycle in ±20%; closed ones leave the wheel', async () => {
    const wheel = new TimerWheel({ shortestMs: 40 });
    const opts = { heartbeatMs: 40, cycleMs: 400, maxBufferBytes: 1e6 };
    let r = 0;
    const random = () => [0, 0.999, 0.5][r++ % 3]!; // beat jitter, then cycle jitter, per stream
    const streams = Array.from({ length: 30 }, () => {
      const { sink, chunks, state } = fakeSink();
      const started = performance.now();
      const s = new SseStream(sink, { ...opts, random }, wheel);
      const endedAt: number[] = [];
      s.onClose(() => endedAt.push(performance.now() - started));
      return { s, chunks, state, endedAt };
    });
    assert.equal(wheel.size, 30, 'one pending deadline per stream');
    streams[0]!.s.end();
    assert.equal(wheel.size, 29, 'an ended stream leaves the wheel');
    await sleep(250);
    for (const { chunks } of streams.slice(1)) {
      const beats = chunks.filter((c) => c.includes(': heartbeat')).length;
      // First beat at 20-40 ms, then every 40 ms (+ at most one 5 ms tick each): 5-6 beats by 250 ms.
      assert.ok(beats >= 4 && beats <= 7, `${beats} heartbeats in 250 ms at 40 ms`);
    }
    await sleep(300);
    for (const { state, endedAt, chunks } of streams.slice(1)) {
      assert.equal(state.ended, true);
      assert.match(chunks.at(-1)!, /connection_cycle/);
      assert.ok(endedAt[0]! >= 320 && endedAt[0]! <= 520, `cycled after ${endedAt[0]} ms (400 ms ±20 %)`);
    }
    assert.equal(wheel.size, 0, 'nothing left on the wheel');
  });

  it('cycles at the first quiet moment in its window: nothing written for quietMs, then `disconnecting` as a write of its own', () => {
    const timers = new VirtualSseTimers({ tickMs: 50 });
    const { sink, chunks, state } = fakeSink();
    const writes: number[] = [];
    const timed: SseSink = { ...sink, write: (c) => (writes.push(timers.now()), sink.write(c)) };
    // random 0: the window opens at 80 % (240 s) and closes at 120 % (360 s).
    const s = new SseStream(
      timed,
      { heartbeatMs: 3_600_000, cycleMs: 300_000, quietMs: 1000, maxBufferBytes: 1e6, random: () => 0 },
      timers,
    );
    // Busy through the window's opening: an event every 100 ms from 230 s to 250 s, then silence.
    for (let t = 230_000; t <= 250_000; t += 100) {
      timers.advanceTo(t);
      s.send(formatSseFrame({ id: String(t), event: 'output.message.delta', data: '{}' }));
    }
    assert.equal(state.ended, false, 'not while events flow');
    timers.advanceTo(250_900);
    assert.equal(state.ended, false, 'not before a full quiet period');
    timers.advanceTo(251_100);
    assert.equal(state.ended, true);
    assert.match(chunks.at(-1)!, /^retry: 100\nevent: disconnecting\n/, 'the frame is one write, alone');
    assert.equal(chunks.filter((c) => c.includes('disconnecting')).length, 1);
    assert.ok(writes.at(-1)! - writes.at(-2)! >= 1000, `a ${writes.at(-1)! - writes.at(-2)!} ms gap before it`);
  });

  it("with no quiet moment, holds events back from quietMs before the window's end (120 %) and cycles after a quiet second", () => {
    const timers = new VirtualSseTimers({ tickMs: 50 });
    const { sink, chunks, state } = fakeSink();
    const s = new SseStream(
      sink,
      { heartbeatMs: 3_600_000, cycleMs: 300_000, quietMs: 1000, maxBufferBytes: 1e6, random: () => 0.5 },
      timers,
    );
    let sent = 0;
    for (let t = 100; !state.ended && t < 400_000; t += 100) {
      timers.advanceTo(t);
      s.send(formatSseFrame({ id: String(t), event: 'output.message.delta', data: '{}' }));
      sent++;
    }
    assert.equal(state.ended, true);
    const endedAt = timers.now();
    assert.ok(endedAt >= 359_000 && endedAt <= 360_000, `cycled at ${endedAt} ms, by the window's end`);
    const events = chunks.filter((c) => c.includes('output.message.delta'));
    assert.equal(
      events.length,
      3589,
      'events stop 1 s before the end (the last written at 358.9 s); the rest wait for the next connection',
    );
    assert.equal(endedAt, 359_900, 'a full quiet second after the last event written');
    assert.ok(sent > events.length);
    assert.match(chunks.at(-1)!, /event: disconnecting/);
  });

  it('quietMs 0 cycles as soon as the window opens, as before', () => {
    const timers = new VirtualSseTimers({ tickMs: 50 });
    const { sink, state } = fakeSink();
    const s = new SseStream(sink, { heartbeatMs: 3_600_000, cycleMs: 300_000, quietMs: 0, maxBufferBytes: 1e6, random: () => 0 }, timers);
    for (let t = 100; !state.ended && t < 400_000; t += 100) {
      timers.advanceTo(t);
      s.send(formatSseFrame({ id: String(t), event: 'x', data: '{}' }));
    }
    assert.ok(timers.now() >= 240_000 && timers.now() <= 240_100, `cycled at ${timers.now()} ms`);
  });

  it('buffers under backpressure, drains in order, and drops a client past the bound', () => {
    let writable = false;
    const { sink, chunks, state } = fakeSink(() => writable);
    const s = new SseStream(
      sink,
      { heartbeatMs: 10_000, cycleMs: 60_000, maxBufferBytes: 200, random: () => 0.5 },
      new TimerWheel({ shortestMs: 10_000 }),
    );
    s.send('A\n\n'); // accepted by the socket buffer but reports backpressure
    s.send('B\n\n');
    s.send('C\n\n');
    assert.equal(chunks.length, 1);
    writable = true;
    s.drain();
    assert.deepEqual(
      chunks.map((c) => c.at(-3)),
      ['A', 'B', 'C'],
    );
    writable = false;
    s.send('D\n\n');
    for (let i = 0; i < 20; i++) s.send('x'.repeat(20) + '\n\n');
    assert.equal(state.aborted, true);
    assert.equal(s.open, false);
  });

  it('tells its observer of a connection cycle and of a slow-client drop, and of nothing else', () => {
    const heard: string[] = [];
    const observer = {
      opened: () => heard.push('opened'),
      written: () => heard.push('written'),
      cycled: () => heard.push('cycled'),
      dropped: () => heard.push('dropped'),
    };
    const timers = new VirtualSseTimers({ tickMs: 10 });
    const cycling = new SseStream(
      fakeSink().sink,
      { heartbeatMs: 10_000, cycleMs: 100, quietMs: 0, maxBufferBytes: 1e6, random: () => 0, observer },
      timers,
    );
    timers.advanceTo(200);
    assert.equal(cycling.open, false);
    assert.deepEqual(heard, ['cycled']);
    const slow = new SseStream(
      fakeSink(() => false).sink,
      { heartbeatMs: 10_000, cycleMs: 60_000, maxBufferBytes: 10, random: () => 0.5, observer },
      timers,
    );
    slow.send('A\n\n');
    slow.send('x'.repeat(20));
    assert.equal(slow.open, false);
    assert.deepEqual(heard, ['cycled', 'dropped']);
    new SseStream(fakeSink().sink, { heartbeatMs: 10_000, cycleMs: 60_000, maxBufferBytes: 1e6, observer }, timers).disconnect(
      'server_shutdown',
    );
    assert.deepEqual(heard, ['cycled', 'dropped'], 'a shutdown is not a cycle');
  });
});
