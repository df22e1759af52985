/**
 * The limit: a bare uWebSockets.js SSE broadcast server with nothing else in the process.
 *
 *   node --expose-gc --import tsx bench/sse-fanout/bare-server.ts <control socket>   (env PORT, HOST)
 *
 * `GET /s/<channel>` subscribes to a channel (status, SSE headers and a `connected` frame, like
 * the service). A `publish {n}` notification on the control socket broadcasts n events, round
 * robin over the channels, each serialised once (a frame of the same shape and size as the
 * service's: `retry:`, `id:`, `event:`, `data:` with a SessionEvent-like JSON carrying
 * `bench_t`) and written corked to every subscriber. Backpressure is handled as in the design
 * notes (§7.2): a queue per client, flushed from onWritable, closed past 1 MiB. Heartbeats go
 * out staggered, 1/30 of the connections per second, as the service does on average.
 */
import { randomUUID } from 'node:crypto';
import { writeHeapSnapshot } from 'node:v8';
import { App, us_listen_socket_close, type HttpResponse, type us_listen_socket } from 'uWebSockets.js';
import { connectControl, nowUs } from './control.js';

const controlPath = process.argv[2]!;
const port = Number(process.env['PORT'] ?? 9002);
const host = process.env['HOST'] ?? '127.0.0.1';
const MAX_BUFFER = 1 << 20;

interface Client {
  res: HttpResponse;
  open: boolean;
  blocked: boolean;
  pending: string[];
  pendingBytes: number;
}

const channels = new Map<string, Set<Client>>();
const all = new Set<Client>();
const channelIds: string[] = [];
const sequences = new Map<string, number>();
let published = 0;
let windowStart = performance.now();
let slowClosed = 0;

function writeNow(c: Client, chunk: string): void {
  if (!c.res.write(chunk)) c.blocked = true;
}

function send(c: Client, chunk: string): void {
  if (!c.open) return;
  if (c.blocked) {
    c.pending.push(chunk);
    c.pendingBytes += chunk.length;
    if (c.pendingBytes > MAX_BUFFER) {
      c.open = false;
      slowClosed++;
      c.res.cork(() => c.res.close());
    }
    return;
  }
  c.res.cork(() => writeNow(c, chunk));
}

const app = App();
app.get('/s/:channel', (res, req) => {
  const channel = req.getParameter(0)!;
  const c: Client = { res, open: true, blocked: false, pending: [], pendingBytes: 0 };
  let set = channels.get(channel);
  if (!set) {
    set = new Set();
    channels.set(channel, set);
    channelIds.push(channel);
  }
  const subs = set;
  res.onAborted(() => {
    c.open = false;
    subs.delete(c);
    all.delete(c);
  });
  res.onWritable(() => {
    c.blocked = false;
    while (c.pending.length && !c.blocked) {
      const chunk = c.pending.shift()!;
      c.pendingBytes -= chunk.length;
      writeNow(c, chunk);
    }
    if (!c.pending.length && !c.blocked) writeNow(c, ':\n\n'); // uWS drains only if we write
    return true;
  });
  res
    .writeStatus('200 OK')
    .writeHeader('Content-Type', 'text/event-stream')
    .writeHeader('Cache-Control', 'no-cache')
    .writeHeader('X-Accel-Buffering', 'no');
  res.write(`retry: 100\nevent: connected\ndata: {"status":"connected"}\n\n`);
  subs.add(c);
  all.add(c);
});

let rr = 0;
/** Broadcasts n events; the frame mirrors the service's (retry hint + SessionEvent JSON). */
function publish(n: number): void {
  if (!channelIds.length) return;
  for (let i = 0; i < n; i++) {
    const channel = channelIds[rr++ % channelIds.length]!;
    const seq = (sequences.get(channel) ?? 0) + 1;
    sequences.set(channel, seq);
    const id = randomUUID();
    const event = {
      id,
      type: 'output.message.delta',
      ts: new Date().toISOString(),
      session_id: channel,
      sequence: seq,
      context: {},
      data: { delta: 'lorem ipsum dolor sit amet ', bench_t: nowUs() },
    };
    const frame = `retry: 100\nid: ${id}\nevent: output.message.delta\ndata: ${JSON.stringify(event)}\n\n`;
    const subs = channels.get(channel);
    if (subs) for (const c of subs) send(c, frame);
    published++;
  }
}

// Staggered heartbeats: every second, the next 1/30 of the connections.
let beatCursor: Client[] = [];
setInterval(() => {
  if (!beatCursor.length) beatCursor = [...all];
  const take = Math.ceil(all.size / 30);
  for (const c of beatCursor.splice(0, take)) if (c.open) send(c, ': heartbeat\n\n');
}, 1000).unref();

let listenSocket: us_listen_socket | null = null;
app.listen(host, port, (socket) => {
  if (!socket) {
    process.stderr.write(`bare-server: cannot listen on ${host}:${port}\n`);
    process.exit(1);
  }
  listenSocket = socket;
});
app.get('/health', (res) => void res.end('ok'));

connectControl(controlPath, 'bare', {
  publish: ({ n }: { n: number }) => publish(n),
  gc: () => {
    (globalThis as { gc?: () => void }).gc?.();
    (globalThis as { gc?: () => void }).gc?.();
  },
  stats: () => ({
    windowMs: performance.now() - windowStart,
    streams: all.size,
    channels: channels.size,
    published,
    slowClosed,
    appendsInFlight: 0,
    failed: 0,
    shed: 0,
    memory: process.memoryUsage(),
  }),
  heapSnapshot: ({ file }: { file: string }) => writeHeapSnapshot(file),
  resetCounters: () => {
    windowStart = performance.now();
    published = 0;
  },
});

const stop = () => {
  if (listenSocket) us_listen_socket_close(listenSocket);
  app.close();
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
