/**
 * Preloaded into a benchmarked service to see what its garbage collection costs per conversation
 * (GC was ~21 % of the service's CPU on the real path): V8's own GC profiler (`v8.GCProfiler`)
 * over a window of $BENCH_GC_S seconds from $BENCH_GC_FROM_LOAD_S seconds after the first model
 * request. Per kind of collection, how many ran and their main-thread time; and what each
 * scavenge moved into the old generation (old space after minus before): objects still alive
 * at their second scavenge, the conversation's in-flight state among them, which only a full
 * collection frees. Appends one JSON line per window to $BENCH_GC_LOG.
 *
 *   node --import tsx bench/real-path/run.ts --targets nats --no-peer --sessions 50 --duration 20 --warmup 5 \
 *     --node-option=--import=tsx --node-option=--import=$PWD/bench/real-path/gc-sampler.ts --env BENCH_GC_LOG=/tmp/gc.jsonl
 *
 * Helper threads' work (concurrent marking and sweeping) is not in the main-thread times; the
 * benchmark's service CPU counts it.
 */
import { appendFileSync } from 'node:fs';
import { GCProfiler } from 'node:v8';
import { type LoadWindow, loadWindow } from './load-window.js';

/** GCProfiler's own (camel-case) names, unlike `v8.getHeapSpaceStatistics()`. */
interface SpaceUse {
  spaceName: string;
  spaceUsedSize: number;
}

interface GcStatistic {
  gcType: string;
  /** Microseconds. */
  cost: number;
  beforeGC: { heapSpaceStatistics: SpaceUse[] };
  afterGC: { heapSpaceStatistics: SpaceUse[] };
}

const file = process.env['BENCH_GC_LOG'];
const forS = Number(process.env['BENCH_GC_S'] ?? '15');
const profiler = new GCProfiler();

const oldSpaceUsed = (spaces: SpaceUse[]) => spaces.find((s) => s.spaceName === 'old_space')?.spaceUsedSize ?? 0;

/** What one window's collections cost, per kind and per conversation. */
function summarise(statistics: GcStatistic[], conversations: number) {
  const kinds: Record<string, { count: number; ms: number; msPerConversation: number }> = {};
  let promoted = 0;
  for (const s of statistics) {
    const k = (kinds[s.gcType] ??= { count: 0, ms: 0, msPerConversation: 0 });
    k.count++;
    k.ms += s.cost / 1000;
    if (s.gcType === 'Scavenge')
      promoted += Math.max(0, oldSpaceUsed(s.afterGC.heapSpaceStatistics) - oldSpaceUsed(s.beforeGC.heapSpaceStatistics));
  }
  for (const k of Object.values(kinds)) k.msPerConversation = conversations ? k.ms / conversations : 0;
  const ms = Object.values(kinds).reduce((sum, k) => sum + k.ms, 0);
  return {
    seconds: forS,
    conversations,
    gcMsPerConversation: conversations ? ms / conversations : 0,
    promotedKiBPerConversation: conversations ? promoted / 1024 / conversations : 0,
    kinds,
  };
}

function close(window: LoadWindow): void {
  const { statistics } = profiler.stop() as unknown as { statistics: GcStatistic[] };
  const line = { flags: process.execArgv.filter((f) => !f.startsWith('--import')), ...summarise(statistics, window.conversations()) };
  appendFileSync(file!, `${JSON.stringify(line)}\n`);
}

if (file) {
  const fromLoadS = Number(process.env['BENCH_GC_FROM_LOAD_S'] ?? '3');
  loadWindow({ fromS: fromLoadS, forS, fromLoad: true, open: () => profiler.start(), close });
}
