/**
 * CPU per message of the NATS header work this service does on every event, before and after the
 * h15nats cuts, in one process (no server):
 *
 *   node --import tsx bench/real-path/nats-headers-micro.ts [messages]
 *
 * - publish: an event's headers (Sess-Seq, msg id, the expectation) with `MsgHdrs.set` per header
 *   as before, and as `publishHeaders` (acked-publisher.ts) builds them now; both encoded.
 * - live: the two stream sequences of a republished event, through `msg.headers` (the whole block
 *   decoded into a map) as before, and with `numericHeaders` (msg-headers.ts) now.
 */
import { headers, MsgHdrsImpl } from '@nats-io/nats-core';
import { MsgImpl } from '@nats-io/nats-core/internal';
import type { Msg } from '@nats-io/transport-node';
import { publishHeaders } from '../../src/bus/nats/acked-publisher.js';
import { numericHeaders } from '../../src/bus/nats/msg-headers.js';

const N = Number(process.argv[2] ?? 200_000);
const id = '0192f3a4-5b6c-7d8e-9f00-112233445566';

function publishBefore(i: number): Uint8Array {
  const h = headers() as MsgHdrsImpl;
  h.set('Sess-Seq', String(i));
  h.set('Nats-Msg-Id', id);
  h.set('Nats-Expected-Last-Msg-Id', id);
  return h.encode();
}
function publishAfter(i: number): Uint8Array {
  const own = MsgHdrsImpl.fromRecord({ 'Sess-Seq': [String(i)] });
  return (publishHeaders({ headers: own, msgID: id, expect: { lastMsgID: id } }) as MsgHdrsImpl).encode();
}

// A republished event's header block as nats-server 2.10 sends it, then an empty payload.
const block = new TextEncoder().encode(
  'NATS/1.0\r\nNats-Stream: EVENTS_0\r\nNats-Subject: evt.0.0192f3a4-5b6c-7d8e-9f00-112233445566\r\nNats-Sequence: 123456\r\n' +
    'Nats-Time-Stamp: 2026-11-27T22:00:00.123456789Z\r\nNats-Last-Sequence: 123450\r\nNats-Msg-Id: 0192f3a4-5b6c-7d8e-9f00-112233445566\r\n' +
    'Nats-Expected-Last-Msg-Id: 0192f3a4-5b6c-7d8e-9f00-112233445566\r\nSess-Seq: 7\r\n\r\n',
);
const received = () => new MsgImpl({ hdr: block.length } as never, block, {} as never) as unknown as Msg;
function liveBefore(): number {
  const m = received();
  return Number(m.headers?.get('Nats-Sequence')) + Number(m.headers?.get('Nats-Last-Sequence'));
}
const LIVE = ['Nats-Sequence', 'Nats-Last-Sequence'];
function liveAfter(): number {
  const [seq = 0, prev = 0] = numericHeaders(received(), LIVE);
  return seq + prev;
}

function cpuPerCall(f: (i: number) => unknown): string {
  const t0 = process.cpuUsage();
  for (let i = 0; i < N; i++) f(i);
  const u = process.cpuUsage(t0);
  return ((u.user + u.system) / N).toFixed(2);
}
if (liveBefore() !== liveAfter()) throw new Error('the two live reads disagree');
for (let pass = 1; pass <= 2; pass++) {
  process.stdout.write(
    `pass ${pass}: publish headers ${cpuPerCall(publishBefore)} → ${cpuPerCall(publishAfter)} µs, ` +
      `live sequences ${cpuPerCall(liveBefore)} → ${cpuPerCall(liveAfter)} µs per message\n`,
  );
}
