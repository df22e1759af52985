/**
 * The service under test, started from a bench-only entry so the writer can run inside it.
 *
 *   node --expose-gc --import tsx bench/sse-fanout/server.ts <control socket>   (service env: PORT, DATABASE_URL, …)
 *
 * Exactly what src/main.ts does (createApp(loadConfig())), plus a control socket (control.ts)
 * through which the parent drives the writer. The local bus notifies live subscribers in process
 * only, so appends must be made in the process that serves the SSE streams; the parent keeps
 * the clock and sends `append {n}` ticks, and this process appends n events round robin over
 * the benchmark's sessions through the service's own EventLog port (`bus.events.append`, the
 * path the API and workers use). Each event's data carries `bench_t`: CLOCK_MONOTONIC µs taken
 * just before append, so append→receive latency includes storing the event. No route is added.
 */
import { getHeapSpaceStatistics, writeHeapSnapshot } from 'node:v8';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { EventEmitter } from 'node:events';
import { FeedGroup } from '../../src/bus/ordered-feed.js';
import { iterateFeed, type EventLog, type LoggedEvent } from '../../src/bus/index.js';
import type { SessionEvent } from '../../schemas/events.js';
import { connectControl, nowUs } from './control.js';
import { BUCKETS, bucketOf, toSparse } from './histogram.js';
import { windowProfiler } from './profiler.js';

const controlPath = process.argv[2]!;
/** Appends in flight beyond this are shed (counted) instead of queued without bound. */
const MAX_IN_FLIGHT = 5_000;

const app = await createApp(loadConfig());
const { bus, hub } = app.services;
/** The bench's deltas are not the catalogue's (they carry a timestamp): the log as any writer sees it. */
const anyLog: EventLog<LoggedEvent> = bus.events;

/**
 * Experiment (BENCH_EXPERIMENT=no-idle-poll, local bus only), not the service as shipped: live
 * subscriptions are fed by in-process notifications alone, without the local bus's idle
 * re-read of the table every 250 ms per watched session. This process is the only writer in the
 * benchmark, so nothing is missed; it shows what the fan-out costs once that poll is gone (the
 * recommendation in bench/README.md). Same feeds (FeedGroup), same reads, same append path.
 */
if (process.env['BENCH_EXPERIMENT'] === 'no-idle-poll' && bus.kind === 'local') {
  // The bench's deltas are not the catalogue's (they carry a timestamp): the log as any writer sees it.
  const events: EventLog<LoggedEvent> = bus.events;
  const append = events.append.bind(events);
  const read = events.read.bind(events);
  const live = new EventEmitter();
  live.setMaxListeners(0);
  events.append = async (sessionId, input, opts) => {
    const result = await append(sessionId, input, opts);
    if (result.ok) live.emit(sessionId, result.events);
    return result;
  };
  const feeds = new FeedGroup({
    fetch: (sessionId, after) => read(sessionId, { afterSequence: after, limit: 1000 }),
    listen(sessionId, input) {
      const onEvents = (list: SessionEvent[]) => {
        for (const e of list) input.push(e);
      };
      live.on(sessionId, onEvents);
      return { stop: () => live.off(sessionId, onEvents), ready: Promise.resolve() };
    },
    idlePollMs: 0,
  });
  events.follow = (sessionId, sink, { afterSequence = 0 } = {}) => feeds.open(sessionId, sink, afterSequence);
  events.subscribe = (sessionId, opts) => iterateFeed((sink) => events.follow(sessionId, sink, opts));
}
const profiler = windowProfiler();

let sessions: string[] = [];
let rr = 0;
let appended = 0;
let windowStart = performance.now();
let failed = 0;
let shed = 0;
let inFlight = 0;
let lastError: string | null = null;
/** How long `append` took (call → stored and notified), so the latency can be split into store and delivery. */
const appendHist = new Uint32Array(BUCKETS);

function append(n: number): void {
  for (let i = 0; i < n; i++) {
    if (inFlight >= MAX_IN_FLIGHT) {
      shed++;
      continue;
    }
    const sessionId = sessions[rr++ % sessions.length]!;
    inFlight++;
    const t = nowUs();
    anyLog
      .append(sessionId, [{ type: 'output.message.delta', data: { delta: 'lorem ipsum dolor sit amet ', bench_t: t } }])
      .then(
        () => {
          appended++;
          appendHist[bucketOf(nowUs() - t)]!++;
        },
        (err: unknown) => {
          failed++;
          lastError = err instanceof Error ? err.message : String(err);
        },
      )
      .finally(() => inFlight--);
  }
}

connectControl(controlPath, 'service', {
  sessions: ({ ids }: { ids: string[] }) => {
    sessions = ids;
  },
  append: ({ n }: { n: number }) => sessions.length && append(n),
  gc: () => {
    (globalThis as { gc?: () => void }).gc?.();
    (globalThis as { gc?: () => void }).gc?.();
  },
  stats: () => ({
    windowMs: performance.now() - windowStart,
    streams: app.server.streamCount(),
    watchedSessions: hub.watchedCount(),
    published: appended,
    appendsInFlight: inFlight,
    failed,
    shed,
    lastError,
    appendHist: toSparse(appendHist),
    memory: process.memoryUsage(),
    heapSpaces: heapSpaces(),
  }),
  resetCounters: () => {
    windowStart = performance.now();
    appended = 0;
    appendHist.fill(0);
    failed = 0;
    shed = 0;
  },
  heapSnapshot: ({ file }: { file: string }) => writeHeapSnapshot(file),
  profileStart: () => profiler.start(),
  profileStop: ({ file }: { file: string }) => profiler.stop(file),
});

/** Committed and used MiB per V8 heap space: where the RSS of a burst stays. */
function heapSpaces(): Record<string, [committedMiB: number, usedMiB: number]> {
  const mib = (b: number) => Math.round(b / 1048576);
  return Object.fromEntries(getHeapSpaceStatistics().map((s) => [s.space_name, [mib(s.space_size), mib(s.space_used_size)]]));
}

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  const hard = setTimeout(() => process.exit(1), 15_000);
  hard.unref();
  void app.close().then(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
