/**
 * One SSE load-generator process (several run side by side, none shares the server's event loop).
 *
 *   node --import tsx bench/sse-fanout/client.ts <control socket> <name>
 *
 * Holds raw TCP connections (no fetch/undici: at thousands of streams per process the parser
 * cost would make the client the bottleneck). Per stream it sends one HTTP/1.1 GET, checks the
 * `200` status line and the `connected` frame, then only scans the body for the benchmark's
 * marker `"bench_t":<µs>` that the writer embedded in each event's data: one match is one
 * delivered event, and now − bench_t (CLOCK_MONOTONIC, shared by all processes) is its
 * append→receive latency. The parent drives it over the control socket (control.ts).
 */
import { connect, type Socket } from 'node:net';
import { connectControl, nowUs } from './control.js';
import { BUCKETS, bucketOf, toSparse } from './histogram.js';

const [controlPath, name] = process.argv.slice(2) as [string, string];

interface Target {
  windowStart: number;
  delivered: number;
  bytes: number;
  hist: Uint32Array;
  open: number;
  /** Streams that ended after they had opened (server closed them, or a socket error). */
  closedAfterOpen: number;
  failed: number;
  failures: Record<string, number>;
  sockets: Set<Socket>;
}

const targets = new Map<string, Target>();
const MARK = '"bench_t":';

function target(t: string): Target {
  let x = targets.get(t);
  if (!x) {
    x = {
      windowStart: performance.now(),
      delivered: 0,
      bytes: 0,
      hist: new Uint32Array(BUCKETS),
      open: 0,
      closedAfterOpen: 0,
      failed: 0,
      failures: {},
      sockets: new Set(),
    };
    targets.set(t, x);
  }
  return x;
}

interface OpenParams {
  target: string;
  host: string;
  port: number;
  paths: string[];
  headers?: Record<string, string>;
  /** Handshakes in flight at once in this process. */
  concurrency: number;
  timeoutMs: number;
}

/** Opens one stream; resolves true once `connected` arrived, false on any failure. */
function openOne(t: Target, p: OpenParams, path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect({ host: p.host, port: p.port });
    sock.setNoDelay(true);
    sock.setEncoding('latin1');
    let phase: 'head' | 'wait' | 'live' | 'dead' = 'head';
    let buf = '';
    const fail = (why: string) => {
      if (phase === 'dead') return;
      if (phase === 'live') {
        t.open--;
        t.closedAfterOpen++;
      } else {
        t.failed++;
        t.failures[why] = (t.failures[why] ?? 0) + 1;
        resolve(false);
      }
      phase = 'dead';
      t.sockets.delete(sock);
      clearTimeout(timer);
      sock.destroy();
    };
    const timer = setTimeout(() => fail('timeout'), p.timeoutMs);
    t.sockets.add(sock);
    sock.on('connect', () => {
      let req = `GET ${path} HTTP/1.1\r\nHost: ${p.host}:${p.port}\r\nAccept: text/event-stream\r\n`;
      for (const [k, v] of Object.entries(p.headers ?? {})) req += `${k}: ${v}\r\n`;
      sock.write(req + '\r\n');
    });
    sock.on('error', (err: NodeJS.ErrnoException) => fail(err.code ?? 'error'));
    sock.on('close', () => fail('closed'));
    sock.on('data', (chunk: string) => {
      t.bytes += chunk.length;
      if (phase === 'live') return scan(t, chunk, sock);
      buf += chunk;
      if (phase === 'head') {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const status = buf.slice(9, 12);
        if (status !== '200') return fail(`http_${status}`);
        phase = 'wait';
      }
      if (phase === 'wait') {
        const at = buf.indexOf('event: connected');
        if (at < 0) return;
        phase = 'live';
        clearTimeout(timer);
        t.open++;
        resolve(true);
        const rest = buf.slice(at);
        buf = '';
        scan(t, rest, sock);
      }
    });
  });
}

const carry = new WeakMap<Socket, string>();

/** Counts markers on complete lines; an incomplete last line waits for the next chunk. */
function scan(t: Target, chunk: string, sock: Socket): void {
  const prev = carry.get(sock);
  const text = prev ? prev + chunk : chunk;
  const lastNl = text.lastIndexOf('\n');
  if (lastNl < 0) {
    carry.set(sock, text);
    return;
  }
  if (lastNl < text.length - 1) carry.set(sock, text.slice(lastNl + 1));
  else if (prev) carry.delete(sock);
  let at = text.indexOf(MARK);
  if (at < 0 || at > lastNl) return;
  const now = nowUs();
  while (at >= 0 && at < lastNl) {
    let i = at + MARK.length;
    let v = 0;
    for (let c = text.charCodeAt(i); c >= 48 && c <= 57; c = text.charCodeAt(++i)) v = v * 10 + (c - 48);
    t.delivered++;
    t.hist[bucketOf(now - v)]!++;
    at = text.indexOf(MARK, i);
  }
}

async function open(p: OpenParams): Promise<{ opened: number; failed: number; ms: number; failures: Record<string, number> }> {
  const t = target(p.target);
  const started = Date.now();
  let next = 0;
  let opened = 0;
  let failed = 0;
  const worker = async () => {
    while (next < p.paths.length) {
      const path = p.paths[next++]!;
      if (await openOne(t, p, path)) opened++;
      else failed++;
    }
  };
  await Promise.all(Array.from({ length: Math.min(p.concurrency, p.paths.length) }, worker));
  return { opened, failed, ms: Date.now() - started, failures: t.failures };
}

connectControl(controlPath, name, {
  open,
  /** Starts a measurement window: counters and histogram back to zero. */
  reset({ target: name }: { target: string }) {
    const t = target(name);
    t.windowStart = performance.now();
    t.delivered = 0;
    t.bytes = 0;
    t.hist.fill(0);
  },
  report({ target: name }: { target: string }) {
    const t = target(name);
    return {
      windowMs: performance.now() - t.windowStart,
      delivered: t.delivered,
      bytes: t.bytes,
      hist: toSparse(t.hist),
      open: t.open,
      closedAfterOpen: t.closedAfterOpen,
      failed: t.failed,
      failures: t.failures,
    };
  },
  closeAll({ target: name }: { target: string }) {
    const t = target(name);
    for (const s of t.sockets) s.destroy();
    return { closed: t.sockets.size };
  },
});
