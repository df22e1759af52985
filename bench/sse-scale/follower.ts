/**
 * One follower process of bench/sse-scale (several run side by side: the per-process descriptor
 * limit is 20,000, so each holds ~8,000 streams).
 *
 *   node --import tsx bench/sse-scale/follower.ts <control socket> <name>
 *
 * Raw TCP (no fetch: at thousands of streams per process its parser would be the bottleneck).
 * Each stream follows one session on one instance and keeps only what the audit needs: the
 * last sequence and id it got, duplicates (a sequence at or below the last) and gaps (a jump
 * past last + 1). When the server cycles the stream (`disconnecting`) or the connection drops
 * (an instance killed), it reconnects to another instance at random (no affinity) with Last-Event-ID.
 * Latency is receive time − the event's `ts` (wall clock, ms; every process is on this host).
 */
import { connect, type Socket } from 'node:net';
import { connectControl } from '../sse-fanout/control.js';
import { BUCKETS, bucketOf, toSparse } from '../sse-fanout/histogram.js';

const [controlPath, name] = process.argv.slice(2) as [string, string];

interface Stream {
  session: string;
  path: string;
  /** Index into the target's ports of the instance it is on (or will try next). */
  at: number;
  lastSeq: number;
  lastId: string;
  dups: number;
  gaps: number;
  sock: Socket | null;
  live: boolean;
}

interface OpenParams {
  host: string;
  ports: number[];
  headers: Record<string, string>;
  /** [session, path, instance index] per stream. */
  streams: [string, string, number][];
  concurrency: number;
  /** Reconnect after cycling / a drop (off: a dropped stream stays down). */
  reconnect: boolean;
  /** Reconnects wait 100 ms + up to this, at random (default 100). */
  spreadMs?: number;
}

const streams: Stream[] = [];
let params: OpenParams | null = null;
let open = 0;
let reconnects = 0;
let connectFailures = 0;
let delivered = 0;
let cycled = 0;
let measuring = false;
const hist = new Uint32Array(BUCKETS);
const failures: Record<string, number> = {};
/** When the last stream came back up after a drop (for the kill run's time to recover). */
let lastReopenAt = 0;

const SEQ = '"sequence":';
const TS = '"ts":"';

/** Handles one complete frame (text between blank lines). */
function onFrame(s: Stream, frame: string): void {
  if (frame.includes('event: disconnecting')) {
    cycled++;
    return;
  }
  const dataAt = frame.indexOf('\ndata: ');
  if (dataAt < 0) return; // heartbeat or `connected`
  const idAt = frame.indexOf('id: ');
  const seqAt = frame.indexOf(SEQ, dataAt);
  if (idAt < 0 || seqAt < 0) return;
  const seq = Number.parseInt(frame.slice(seqAt + SEQ.length, seqAt + SEQ.length + 16), 10);
  const tsAt = frame.indexOf(TS, dataAt);
  if (measuring && tsAt >= 0) {
    const ms = Date.now() - Date.parse(frame.slice(tsAt + TS.length, tsAt + TS.length + 24));
    hist[bucketOf(Math.max(0, ms) * 1000)]!++;
  }
  delivered++;
  if (seq <= s.lastSeq) {
    s.dups++;
    return;
  }
  if (seq > s.lastSeq + 1) s.gaps += seq - s.lastSeq - 1;
  s.lastSeq = seq;
  s.lastId = frame.slice(idAt + 4, frame.indexOf('\n', idAt));
}

/** Connects one stream; resolves true once `connected` arrived. */
function connectStream(s: Stream, p: OpenParams): Promise<boolean> {
  return new Promise((resolve) => {
    const port = p.ports[s.at % p.ports.length]!;
    const sock = connect({ host: p.host, port });
    s.sock = sock;
    sock.setNoDelay(true);
    sock.setEncoding('latin1');
    let head = true;
    let buf = '';
    let settled = false;
    const settle = (ok: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(ok);
    };
    const down = (why: string) => {
      if (s.sock !== sock) return;
      s.sock = null;
      sock.destroy();
      if (s.live) {
        s.live = false;
        open--;
      } else {
        connectFailures++;
        failures[why] = (failures[why] ?? 0) + 1;
      }
      settle(false);
      if (p.reconnect && !closing) {
        // Another instance, at random as a load balancer would spread them: all of a dead
        // instance's clients on one survivor would pass its descriptor limit.
        s.at += 1 + Math.floor(Math.random() * Math.max(1, p.ports.length - 1));
        setTimeout(() => void reopen(s, p), 100 + Math.random() * (p.spreadMs ?? 100)).unref();
      }
    };
    const timer = setTimeout(() => down('timeout'), 30_000);
    sock.on('connect', () => {
      let req = `GET ${s.path} HTTP/1.1\r\nHost: ${p.host}:${port}\r\nAccept: text/event-stream\r\n`;
      for (const [k, v] of Object.entries(p.headers)) req += `${k}: ${v}\r\n`;
      if (s.lastId) req += `Last-Event-ID: ${s.lastId}\r\n`;
      sock.write(req + '\r\n');
    });
    sock.on('error', (err: NodeJS.ErrnoException) => down(err.code ?? 'error'));
    sock.on('close', () => down('closed'));
    sock.on('data', (chunk: string) => {
      buf += chunk;
      if (head) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const status = buf.slice(9, 12);
        if (status !== '200') return down(`http_${status}`);
        head = false;
        buf = buf.slice(end + 4);
        s.live = true;
        open++;
        settle(true);
      }
      // Chunked transfer framing (size lines) sits between frames; frames never span a size line's
      // meaning for the fields we read, so split on blank lines and strip size lines.
      let cut: number;
      while ((cut = buf.indexOf('\n\n')) >= 0) {
        onFrame(s, buf.slice(0, cut));
        buf = buf.slice(cut + 2);
      }
    });
  });
}

let closing = false;

async function reopen(s: Stream, p: OpenParams): Promise<void> {
  if (closing || s.sock) return;
  reconnects++;
  if (await connectStream(s, p)) lastReopenAt = Date.now();
}

async function openAll(p: OpenParams): Promise<{ opened: number; failed: number; ms: number; failures: Record<string, number> }> {
  params = p;
  const started = Date.now();
  const batch: Stream[] = p.streams.map(([session, path, at]) => ({
    session,
    path,
    at,
    lastSeq: 0,
    lastId: '',
    dups: 0,
    gaps: 0,
    sock: null,
    live: false,
  }));
  streams.push(...batch);
  let next = 0;
  let opened = 0;
  let failed = 0;
  const worker = async () => {
    while (next < batch.length) {
      const s = batch[next++]!;
      if (await connectStream(s, p)) opened++;
      else failed++;
    }
  };
  await Promise.all(Array.from({ length: Math.min(p.concurrency, batch.length) }, worker));
  return { opened, failed, ms: Date.now() - started, failures };
}

connectControl(controlPath, name, {
  open: openAll,
  /** Starts a latency window. */
  measure({ on }: { on: boolean }) {
    measuring = on;
    if (on) hist.fill(0);
  },
  report() {
    return { streams: streams.length, open, reconnects, connectFailures, cycled, delivered, failures, lastReopenAt, hist: toSparse(hist) };
  },
  /** Compares what each stream got with each session's last logged sequence. */
  audit({ last }: { last: Record<string, number> }) {
    let lost = 0;
    let dups = 0;
    let gaps = 0;
    let streamsLosing = 0;
    let streamsDuplicating = 0;
    let audited = 0;
    for (const s of streams) {
      const l = last[s.session];
      if (l === undefined) continue;
      audited++;
      const missing = Math.max(0, l - s.lastSeq) + s.gaps;
      lost += missing;
      gaps += s.gaps;
      dups += s.dups;
      if (missing) streamsLosing++;
      if (s.dups) streamsDuplicating++;
    }
    return { audited, lost, gaps, dups, streamsLosing, streamsDuplicating };
  },
  /** Closes every stream past the first `keep` of this process (a lower step of the same load). */
  trim({ keep }: { keep: number }) {
    closing = true;
    for (const s of streams.splice(keep)) {
      if (s.live) open--;
      s.live = false;
      s.sock?.destroy();
      s.sock = null;
    }
    closing = false;
    return { streams: streams.length };
  },
  closeAll() {
    closing = true;
    let n = 0;
    for (const s of streams) {
      if (s.sock) n++;
      s.sock?.destroy();
      s.sock = null;
      s.live = false;
    }
    open = 0;
    streams.length = 0;
    closing = false;
    return { closed: n, params: params !== null };
  },
});
