/**
 * The other side of pglite-transport-micro.ts's `port` transports: PGlite on a worker thread
 * answering over a MessagePort instead of a unix socket. `wire`: PostgreSQL protocol bytes in,
 * bytes out (what a `pg` stream over the port would carry); `query`: SQL text in, rows out by
 * structured clone (PGlite's own API).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';

const port = parentPort!;
// On disk, as the service's: the emulated file system is part of every statement's cost.
const db = await PGlite.create({ dataDir: (workerData as { dataDir: string }).dataDir });
let buffered = Buffer.alloc(0);

port.on('message', async (m: { kind: 'wire'; bytes: Uint8Array } | { kind: 'query'; id: number; sql: string }) => {
  if (m.kind === 'query') {
    const [result] = await db.exec(m.sql);
    port.postMessage({ id: m.id, rows: result?.rows ?? [] });
    return;
  }
  // Frame messages as pglite-socket does: the startup packet has no type byte.
  buffered = Buffer.concat([buffered, m.bytes]);
  const out: Uint8Array[] = [];
  for (;;) {
    if (buffered.length < 5) break;
    const startup = buffered.length >= 8 && buffered.readInt32BE(4) === 196608;
    const length = startup ? buffered.readInt32BE(0) : 1 + buffered.readInt32BE(1);
    if (buffered.length < length) break;
    const message = new Uint8Array(buffered.subarray(0, length));
    buffered = buffered.subarray(length);
    await db.execProtocolRawStream(message, { onRawData: (d) => out.push(d.slice()) });
  }
  if (out.length === 0) return;
  const reply = new Uint8Array(out.reduce((sum, d) => sum + d.length, 0));
  let at = 0;
  for (const d of out) {
    reply.set(d, at);
    at += d.length;
  }
  port.postMessage(reply, [reply.buffer]);
});
port.postMessage('ready');
