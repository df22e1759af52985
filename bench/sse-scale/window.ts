import { readCpuSeconds, readMemory } from '../lib/process.js';
import { collectGarbage } from './inspector.js';

/**
 * One measured window over a set of server processes: CPU used during it (from /proc, % of one
 * core), then memory after two forced GCs through the inspector (RSS and V8 heap used), or,
 * without an inspector, the median RSS of samples taken through the window.
 */
export interface ProcWindow {
  name: string;
  rssKiB: number;
  heapUsedKiB: number | null;
  cpuPct: number;
}

export async function measureWindow(
  procs: { name: string; pid: number; inspector?: string | null }[],
  seconds: number,
): Promise<ProcWindow[]> {
  const cpu0 = procs.map((p) => readCpuSeconds(p.pid) ?? 0);
  const t0 = performance.now();
  const samples: number[][] = procs.map(() => []);
  const end = t0 + seconds * 1000;
  while (performance.now() < end) {
    await new Promise((r) => setTimeout(r, 1000));
    procs.forEach((p, i) => {
      const m = readMemory(p.pid);
      if (m) samples[i]!.push(m.rssKiB);
    });
  }
  const elapsed = (performance.now() - t0) / 1000;
  const cpuPct = procs.map((p, i) => (100 * ((readCpuSeconds(p.pid) ?? cpu0[i]!) - cpu0[i]!)) / elapsed);
  const out: ProcWindow[] = [];
  for (const [i, p] of procs.entries()) {
    const gc = p.inspector ? await collectGarbage(p.inspector) : null;
    out.push({ name: p.name, rssKiB: gc?.rssKiB ?? median(samples[i]!), heapUsedKiB: gc?.heapUsedKiB ?? null, cpuPct: cpuPct[i]! });
  }
  return out;
}

function median(xs: number[]): number {
  if (!xs.length) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** Per idle stream: KiB of RSS and % of a core per 50k streams, per process and in total, from a 0-stream and an N-stream window. */
export function perStream(base: ProcWindow[], loaded: ProcWindow[], streamsPerProc: number[]) {
  const rows = loaded.map((l, i) => {
    const b = base[i]!;
    const n = streamsPerProc[i]!;
    return {
      name: l.name,
      streams: n,
      rssBaseMiB: round(b.rssKiB / 1024),
      rssMiB: round(l.rssKiB / 1024),
      kibPerStream: n ? round((l.rssKiB - b.rssKiB) / n) : null,
      heapKibPerStream: n && l.heapUsedKiB !== null && b.heapUsedKiB !== null ? round((l.heapUsedKiB - b.heapUsedKiB) / n) : null,
      cpuBasePct: round(b.cpuPct),
      cpuPct: round(l.cpuPct),
      corePctPer50k: n ? round(((l.cpuPct - b.cpuPct) * 50_000) / n) : null,
    };
  });
  const n = streamsPerProc.reduce((a, b) => a + b, 0);
  const dRss = loaded.reduce((s, l, i) => s + l.rssKiB - base[i]!.rssKiB, 0);
  const dCpu = loaded.reduce((s, l, i) => s + l.cpuPct - base[i]!.cpuPct, 0);
  const dHeap = loaded.reduce((s, l, i) => s + (l.heapUsedKiB ?? Number.NaN) - (base[i]!.heapUsedKiB ?? Number.NaN), 0);
  return {
    rows,
    total: {
      streams: n,
      kibPerStream: n ? round(dRss / n) : null,
      heapKibPerStream: n && Number.isFinite(dHeap) ? round(dHeap / n) : null,
      corePctPer50k: n ? round((dCpu * 50_000) / n) : null,
    },
  };
}

function round(x: number): number {
  return Math.round(x * 100) / 100;
}
