import { join } from 'node:path';
import type { createControlHub, Peer } from '../sse-fanout/control.js';
import { BUCKETS, mergeSparse, percentilesMs } from '../sse-fanout/histogram.js';
import { spawnProcess, type Proc } from '../lib/process.js';

/**
 * The follower processes of bench/sse-scale (follower.ts), driven over one control socket:
 * streams are dealt out in blocks of `perProcess`, reports and audits are summed.
 */
export interface FollowerPool {
  /** Opens the streams: [session, path, instance index] each, ports = the targets' ports. */
  open(
    streams: [string, string, number][],
    o: OpenOptions,
  ): Promise<{ opened: number; failed: number; ms: number; failures: Record<string, number> }>;
  measure(on: boolean): Promise<void>;
  report(): Promise<PoolReport>;
  audit(last: Record<string, number>): Promise<AuditResult>;
  /** Keeps the first `n` streams dealt (a lower step of the same load), closes the rest. */
  trim(n: number): Promise<void>;
  closeAll(): Promise<number>;
  stop(): Promise<void>;
}

export interface OpenOptions {
  ports: number[];
  headers: Record<string, string>;
  reconnect: boolean;
  spreadMs?: number;
}

export interface PoolReport {
  open: number;
  reconnects: number;
  connectFailures: number;
  cycled: number;
  delivered: number;
  failures: Record<string, number>;
  lastReopenAt: number;
  latency: { count: number; p50: number; p99: number; max: number };
}

export interface AuditResult {
  audited: number;
  lost: number;
  gaps: number;
  dups: number;
  streamsLosing: number;
  streamsDuplicating: number;
}

export type ControlHub = ReturnType<typeof createControlHub>;

export async function startFollowers(o: {
  here: string;
  hub: ControlHub;
  controlPath: string;
  processes: number;
  perProcess: number;
}): Promise<FollowerPool> {
  const { hub } = o;
  const procs: Proc[] = [];
  const peers: Peer[] = [];
  for (let i = 0; i < o.processes; i++) {
    const name = `f${i}`;
    procs.push(spawnProcess({ name, args: ['--import', 'tsx', join(o.here, 'follower.ts'), o.controlPath, name] }));
    peers.push(await hub.peer(name));
  }
  let dealt = 0;
  const all = <T>(method: string, params?: unknown) => Promise.all(peers.map((p) => p.call<T>(method, params)));
  return {
    async open(streams, opts) {
      const calls: Promise<{ opened: number; failed: number; ms: number; failures: Record<string, number> }>[] = [];
      for (let at = 0; at < streams.length; ) {
        const peer = peers[Math.floor(dealt / o.perProcess)];
        if (!peer) throw new Error(`more streams than ${o.processes} follower processes × ${o.perProcess}`);
        const room = o.perProcess - (dealt % o.perProcess);
        const slice = streams.slice(at, at + room);
        calls.push(peer.call('open', { host: '127.0.0.1', ...opts, streams: slice, concurrency: 64 }));
        at += slice.length;
        dealt += slice.length;
      }
      const results = await Promise.all(calls);
      const failures: Record<string, number> = {};
      for (const r of results) for (const [k, v] of Object.entries(r.failures)) failures[k] = (failures[k] ?? 0) + v;
      return {
        opened: results.reduce((n, r) => n + r.opened, 0),
        failed: results.reduce((n, r) => n + r.failed, 0),
        ms: Math.max(0, ...results.map((r) => r.ms)),
        failures,
      };
    },
    async measure(on) {
      await all('measure', { on });
    },
    async report() {
      const rs = await all<Omit<PoolReport, 'latency'> & { hist: [number, number][] }>('report');
      const hist = new Float64Array(BUCKETS);
      const failures: Record<string, number> = {};
      for (const r of rs) {
        mergeSparse(hist, r.hist);
        for (const [k, v] of Object.entries(r.failures)) failures[k] = (failures[k] ?? 0) + v;
      }
      const p = percentilesMs(hist, [50, 99]);
      const sum = (f: (r: (typeof rs)[number]) => number) => rs.reduce((n, r) => n + f(r), 0);
      return {
        open: sum((r) => r.open),
        reconnects: sum((r) => r.reconnects),
        connectFailures: sum((r) => r.connectFailures),
        cycled: sum((r) => r.cycled),
        delivered: sum((r) => r.delivered),
        failures,
        lastReopenAt: Math.max(0, ...rs.map((r) => r.lastReopenAt)),
        latency: { count: p.count, p50: p.values['p50']!, p99: p.values['p99']!, max: p.maxMs },
      };
    },
    async audit(last) {
      const rs = await all<AuditResult>('audit', { last });
      const out: AuditResult = { audited: 0, lost: 0, gaps: 0, dups: 0, streamsLosing: 0, streamsDuplicating: 0 };
      for (const r of rs) for (const k of Object.keys(out) as (keyof AuditResult)[]) out[k] += r[k];
      return out;
    },
    async trim(n) {
      await Promise.all(peers.map((p, i) => p.call('trim', { keep: Math.max(0, Math.min(o.perProcess, n - i * o.perProcess)) })));
      dealt = Math.min(dealt, n);
    },
    async closeAll() {
      const rs = await all<{ closed: number }>('closeAll');
      dealt = 0;
      return rs.reduce((n, r) => n + r.closed, 0);
    },
    async stop() {
      await Promise.all(procs.map((p) => p.stop(2000)));
    },
  };
}
