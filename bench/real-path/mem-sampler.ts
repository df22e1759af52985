/**
 * Preloaded into a benchmarked service (`run.ts --mem-log DIR`): every 10 s one JSON line with
 * process.memoryUsage() and the kernel's view of the process (/proc/self/smaps_rollup: RSS split
 * into anonymous and file-backed pages), appended to $BENCH_MEM_LOG. It tells growth of the JS
 * heap from growth of native memory (malloc arenas, buffers), which RSS alone cannot.
 * `--env BENCH_MEM_GC=1 --node-option=--expose-gc` collects first (live heap; costs a full GC per sample).
 */
import { appendFileSync, readFileSync } from 'node:fs';

const file = process.env['BENCH_MEM_LOG'];
const t0 = Date.now();

function rollup(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of readFileSync('/proc/self/smaps_rollup', 'utf8').split('\n')) {
    const m = /^(\w+):\s+(\d+) kB/.exec(line);
    if (m && ['Rss', 'Anonymous', 'Private_Dirty', 'Shared_Clean'].includes(m[1]!)) out[m[1]!] = Number(m[2]);
  }
  return out;
}

const mib = (n: number) => Math.round(n / 1048576);

// With BENCH_MEM_GC=1 (and --expose-gc) a full collection runs first, so heapUsed is the live heap.
const gc = process.env['BENCH_MEM_GC'] === '1' ? (globalThis as { gc?: () => void }).gc : undefined;

if (file) {
  setInterval(() => {
    gc?.();
    const m = process.memoryUsage();
    const r = rollup();
    const line = {
      s: Math.round((Date.now() - t0) / 1000),
      rss: mib(m.rss),
      heapTotal: mib(m.heapTotal),
      heapUsed: mib(m.heapUsed),
      external: mib(m.external),
      arrayBuffers: mib(m.arrayBuffers),
      anonMiB: Math.round((r['Anonymous'] ?? 0) / 1024),
    };
    appendFileSync(file, JSON.stringify(line) + '\n');
  }, 10_000).unref();
}
