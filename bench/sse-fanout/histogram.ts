/**
 * A mergeable latency histogram: log buckets 1 % wide over microseconds (1 µs … ~100 s), so
 * every load-generator process keeps one and the parent adds them up before taking percentiles.
 */
const RATIO = 1.01;
const INV_LOG = 1 / Math.log(RATIO);
export const BUCKETS = 1900;

export function bucketOf(us: number): number {
  if (us <= 1) return 0;
  return Math.min(BUCKETS - 1, Math.ceil(Math.log(us) * INV_LOG));
}

/** Sparse form for the wire: [bucket, count] pairs. */
export function toSparse(h: Uint32Array): [number, number][] {
  const out: [number, number][] = [];
  for (let i = 0; i < h.length; i++) if (h[i]) out.push([i, h[i]!]);
  return out;
}

export function mergeSparse(into: Float64Array, sparse: [number, number][]): void {
  for (const [i, c] of sparse) into[i] = (into[i] ?? 0) + c;
}

/** Percentiles in milliseconds (bucket upper bound, so at most 1 % high). */
export function percentilesMs(h: Float64Array, ps: number[]): { count: number; values: Record<string, number>; maxMs: number } {
  let count = 0;
  for (let i = 0; i < h.length; i++) count += h[i]!;
  const values: Record<string, number> = {};
  let maxMs = 0;
  for (let i = h.length - 1; i >= 0; i--)
    if (h[i]) {
      maxMs = round3(RATIO ** i / 1000);
      break;
    }
  for (const p of ps) {
    if (!count) {
      values[`p${p}`] = 0;
      continue;
    }
    const rank = Math.max(1, Math.ceil((p / 100) * count));
    let acc = 0;
    for (let i = 0; i < h.length; i++) {
      acc += h[i]!;
      if (acc >= rank) {
        values[`p${p}`] = round3(RATIO ** i / 1000);
        break;
      }
    }
  }
  return { count, values, maxMs };
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
