/**
 * Preloaded into a benchmarked service to see what allocates (GC was 7-13 % of the service's CPU
 * on the real path): V8's sampling heap profiler, counting objects the GC has already collected
 * too (so it measures allocation, not retention), from $BENCH_ALLOC_FROM_S seconds after start
 * for $BENCH_ALLOC_S seconds. Writes $BENCH_ALLOC_PROF (a .heapprofile that Chrome DevTools
 * opens) and, beside it, `.top.txt`: the functions that allocated most (bytes estimated by V8
 * from the samples), with their share.
 *
 *   node --import tsx bench/real-path/run.ts --targets nats --no-peer --sessions 50 --duration 20 --warmup 5 \
 *     --node-option=--import=tsx --node-option=--import=$PWD/bench/real-path/alloc-sampler.ts \
 *     --env BENCH_ALLOC_PROF=/tmp/alloc.heapprofile --env BENCH_ALLOC_FROM_S=15 --env BENCH_ALLOC_S=15
 *
 * `BENCH_ALLOC_SURVIVORS=1` (with `--node-option=--expose-gc`) samples only what outlived a
 * scavenge: what the old generation took in (bench/real-path/gc-sampler.ts measures how much) and
 * by whom.
 *
 * `BENCH_ALLOC_FROM_LOAD_S` counts the start from the first model request instead of the process
 * start (start-up time varies by mode and build). The conversations in the window (model requests
 * sent / 2: the benchmark's conversation is model → tool → model) go into `.top.txt` and `.json`,
 * so MiB per conversation is total / count without guessing the rate. bench/real-path/alloc-report.ts breaks
 * a profile down by package and by our nearest frame.
 */
import type { HeapProfiler } from 'node:inspector';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { type LoadWindow, loadWindow } from './load-window.js';

type ProfileNode = HeapProfiler.SamplingHeapProfileNode;

const file = process.env['BENCH_ALLOC_PROF'];
const fromLoadS = process.env['BENCH_ALLOC_FROM_LOAD_S'];
const forS = Number(process.env['BENCH_ALLOC_S'] ?? '15');
/** Leave out what a scavenge collected: what is left survived one (promoted, bar the last scavenge's). */
const survivors = process.env['BENCH_ALLOC_SURVIVORS'] === '1';
const session = new Session();

/** Bytes per function (name and place), summed over every stack it allocated from. */
function selfBytes(root: ProfileNode): Map<string, number> {
  const out = new Map<string, number>();
  const walk = (n: ProfileNode) => {
    const where = n.callFrame.url.replace(/^.*\/(node_modules|src)\//, '$1/');
    const key = `${n.callFrame.functionName || '(anonymous)'} ${where}:${n.callFrame.lineNumber + 1}`;
    out.set(key, (out.get(key) ?? 0) + n.selfSize);
    for (const c of n.children) walk(c);
  };
  walk(root);
  return out;
}

async function open(): Promise<void> {
  session.connect();
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 16_384,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: !survivors,
  });
}

async function close(window: LoadWindow): Promise<void> {
  const conversations = window.conversations();
  // Survivors: what was allocated since the last scavenge is still in the profile; one now drops its dead.
  if (survivors) (globalThis as { gc?: (o: object) => void }).gc?.({ type: 'minor', execution: 'sync' });
  const { profile } = (await session.post('HeapProfiler.stopSampling')) as { profile: { head: ProfileNode } };
  session.disconnect();
  writeFileSync(file!, JSON.stringify(profile));
  const bytes = [...selfBytes(profile.head)].sort((a, b) => b[1] - a[1]);
  const total = bytes.reduce((s, [, b]) => s + b, 0);
  writeFileSync(`${file}.json`, JSON.stringify({ seconds: forS, totalBytes: total, conversations }));
  const perConv = conversations ? `, ${conversations} conversations, ${(total / 1048576 / conversations).toFixed(3)} MiB each` : '';
  const lines = [`total ${(total / 1048576).toFixed(1)} MiB in ${forS} s${perConv}`];
  for (const [where, b] of bytes.slice(0, 60))
    lines.push(`${((100 * b) / total).toFixed(1).padStart(5)} %  ${(b / 1048576).toFixed(2).padStart(8)} MiB  ${where}`);
  writeFileSync(`${file}.top.txt`, lines.join('\n') + '\n');
}

if (file) {
  loadWindow({
    fromS: Number(fromLoadS ?? process.env['BENCH_ALLOC_FROM_S'] ?? '15'),
    forS,
    fromLoad: fromLoadS !== undefined,
    open,
    close,
  });
}
