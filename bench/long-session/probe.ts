/**
 * What a long-session bucket costs besides CPU (issue 26 item 2, the embedded mode's growth):
 * the service process's writes (/proc/<pid>/io: bytes handed to write(2) and write calls, every
 * thread, so PGlite's data-directory writes count) and, when the service runs with
 * METRICS_TOKEN (`--env METRICS_TOKEN=…`), its main thread's garbage collection, heap, snapshot
 * writes and the events turns read from the log (`/metrics`). Read before and after a bucket.
 */
import { readdirSync, readFileSync } from 'node:fs';

export interface ProbeReading {
  wchar: number;
  syscw: number;
  /** CPU seconds by thread kind (threadKind). */
  threads: Map<string, number>;
  metrics: Map<string, number> | null;
}

export interface ProbeDelta {
  /** Service CPU ms per turn by thread kind: main, pglite, v8 (the GC's helper threads), libuv, profiler. */
  threadCpuMsPerTurn: Record<string, number>;
  writtenKiBPerTurn: number;
  writeCallsPerTurn: number;
  /** Main thread GC ms per turn by kind (prom-client's nodejs_gc_duration_seconds). */
  gcMsPerTurn?: Record<string, number>;
  heapUsedMiB?: number;
  eventsReadPerTurn?: number;
  snapshotWrites?: number;
  snapshotWriteMs?: number;
  snapshotWrittenKiB?: number;
}

function readIo(pid: number | string): { wchar: number; syscw: number } {
  try {
    const text = readFileSync(`/proc/${pid}/io`, 'utf8');
    const field = (name: string) => Number(new RegExp(`^${name}: (\\d+)$`, 'm').exec(text)?.[1] ?? NaN);
    return { wchar: field('wchar'), syscw: field('syscw') };
  } catch {
    return { wchar: NaN, syscw: NaN };
  }
}

/**
 * The kind of a thread of the service. Node names its V8 platform threads (parallel and
 * concurrent GC, compilation) and the PGlite worker thread alike ("node"): the PGlite thread is
 * the one that writes files (the data directory), kept from the first reading on.
 */
function threadKind(pid: number, tid: string, comm: string, wchar: number, known: Map<string, string>): string {
  const seen = known.get(tid);
  if (seen) return seen;
  let kind = 'v8';
  if (tid === String(pid)) kind = 'main';
  else if (comm.startsWith('libuv')) kind = 'libuv';
  else if (comm.startsWith('v8:Prof')) kind = 'profiler';
  else if (wchar > 1_000_000) kind = 'pglite';
  else if (comm !== 'node') kind = 'other';
  if (kind !== 'v8') known.set(tid, kind);
  return kind;
}

const kinds = new Map<string, string>();
const TICKS = 100; // USER_HZ

function readThreads(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  let tids: string[] = [];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const comm = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      const kind = threadKind(pid, tid, comm, readIo(`${pid}/task/${tid}`).wchar, kinds);
      out.set(kind, (out.get(kind) ?? 0) + (Number(f[11]) + Number(f[12])) / TICKS);
    } catch {
      // the thread ended meanwhile
    }
  }
  return out;
}

async function scrape(base: string, token: string | undefined): Promise<Map<string, number> | null> {
  if (!token) return null;
  const res = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  if (res.status !== 200) return null;
  const out = new Map<string, number>();
  for (const line of (await res.text()).split('\n')) {
    if (line.startsWith('#') || !line) continue;
    const sp = line.lastIndexOf(' ');
    out.set(line.slice(0, sp), Number(line.slice(sp + 1)));
  }
  return out;
}

export async function probe(pid: number, base: string, token: string | undefined): Promise<ProbeReading> {
  const metrics = await scrape(base, token);
  return { ...readIo(pid), threads: readThreads(pid), metrics };
}

const round2 = (n: number) => Math.round(n * 100) / 100;

export function probeDelta(a: ProbeReading, b: ProbeReading, turns: number): ProbeDelta {
  const threadCpuMsPerTurn: Record<string, number> = {};
  for (const [kind, sec] of b.threads) threadCpuMsPerTurn[kind] = round2(((sec - (a.threads.get(kind) ?? 0)) * 1000) / turns);
  const out: ProbeDelta = {
    threadCpuMsPerTurn,
    writtenKiBPerTurn: round2((b.wchar - a.wchar) / 1024 / turns),
    writeCallsPerTurn: round2((b.syscw - a.syscw) / turns),
  };
  if (!a.metrics || !b.metrics) return out;
  const d = (key: string) => (b.metrics!.get(key) ?? 0) - (a.metrics!.get(key) ?? 0);
  const gc: Record<string, number> = {};
  for (const key of b.metrics.keys()) {
    const m = /^nodejs_gc_duration_seconds_sum\{kind="(\w+)"\}$/.exec(key);
    if (m) gc[m[1]!] = round2((d(key) * 1000) / turns);
  }
  out.gcMsPerTurn = gc;
  out.heapUsedMiB = round2((b.metrics.get('nodejs_heap_size_used_bytes') ?? NaN) / 2 ** 20);
  out.eventsReadPerTurn = round2(d('agent_session_turn_log_events_read_total') / turns);
  out.snapshotWrites = d('agent_session_session_snapshot_write_seconds_count');
  out.snapshotWriteMs = round2(d('agent_session_session_snapshot_write_seconds_sum') * 1000);
  out.snapshotWrittenKiB = Math.round(d('agent_session_session_snapshot_written_bytes_total') / 1024);
  return out;
}
