/**
 * How often does a busy SSE stream still cycle mid-burst? (issue 17 item 7)
 *
 * Runs the real SseStream on a virtual clock (test/helpers/virtual-sse-timers.ts) at production
 * settings (SSE_CYCLE_MS 300 s, SSE_CYCLE_QUIET_MS 1 s, heartbeat 30 s, the 50 ms wheel tick
 * those give), against seeded synthetic session loads, for a few hundred cycles each. A client
 * reconnects 100 ms after `disconnecting` and gets the held-back events replayed at once.
 *
 *   node --import tsx bench/sse-cycle/simulate.ts [--cycles 300] [--seed 7]
 *
 * Per load: the share of cycles that found a quiet second ("quiet"), the share that had to hold
 * events back before the window's end ("mid-burst"), the events held and the delay that added,
 * the shortest event-free gap before `disconnecting`; and, for the old rule (cycle at the
 * jittered point whatever is flowing, SSE_CYCLE_QUIET_MS=0), the share of cycles whose
 * `disconnecting` followed an event by < 100 ms (one delta interval: a read shared with events
 * is then likely, and the SDK drops what it parsed earlier in that read).
 */
import { formatSseFrame } from '../../src/http/sse-frame.js';
import { SseStream, type SseSink } from '../../src/http/sse-stream.js';
import { VirtualSseTimers } from '../../test/helpers/virtual-sse-timers.js';

const args = new Map(
  process.argv
    .slice(2)
    .map((a, i, all) => [a, all[i + 1]] as const)
    .filter(([a]) => a.startsWith('--')),
);
const CYCLES = Number(args.get('--cycles') ?? 300);
const SEED = Number(args.get('--seed') ?? 7);
const CYCLE_MS = 300_000;
const HEARTBEAT_MS = 30_000;
const TICK_MS = 50;
const DELTA_MS = 100;
const RETRY_MS = 100;

function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Event times (ms) of one load until `horizon`. */
type Load = (random: () => number, horizon: number) => number[];
const uniform = (r: () => number, lo: number, hi: number) => lo + r() * (hi - lo);

function stream(out: number[], from: number, ms: number): number {
  for (let t = from; t < from + ms; t += DELTA_MS) out.push(t);
  return from + ms;
}

const LOADS: Record<string, Load> = {
  /** A person chatting: replies streamed for 3-20 s, then 5-60 s of reading and typing. */
  chat: (r, horizon) => {
    const out: number[] = [];
    for (let t = 0; t < horizon; ) t = stream(out, t, uniform(r, 3000, 20_000)) + uniform(r, 5000, 60_000);
    return out;
  },
  /** An agent at work: 2-8 steps of 2-15 s streaming and 0.2-3 s tools per turn, 2-20 s between turns. */
  'agent-loop': (r, horizon) => {
    const out: number[] = [];
    for (let t = 0; t < horizon; ) {
      const steps = 2 + Math.floor(r() * 7);
      for (let s = 0; s < steps; s++) {
        t = stream(out, t, uniform(r, 2000, 15_000));
        out.push(t); // tool.started
        t += uniform(r, 200, 3000);
        out.push(t); // tool.completed
      }
      t += uniform(r, 2000, 20_000);
    }
    return out;
  },
  /** Many writers on one session: events at random, 5 a second on average. */
  'random-5/s': (r, horizon) => {
    const out: number[] = [];
    for (let t = 0; t < horizon; t += -Math.log(1 - r()) * 200) out.push(t);
    return out;
  },
  /** Never quiet for a second: streaming with tool pauses of 0.1-0.8 s, without end. */
  continuous: (r, horizon) => {
    const out: number[] = [];
    for (let t = 0; t < horizon; ) t = stream(out, t, uniform(r, 2000, 10_000)) + uniform(r, 100, 800);
    return out;
  },
};

interface Cycle {
  held: number;
  /** From the first held event to the reconnect, ms. */
  delayMs: number;
  /** Event-free gap before `disconnecting`, ms. */
  gapMs: number;
}

function run(load: Load, quietMs: number): Cycle[] {
  const random = rng(SEED);
  const times = load(random, CYCLES * CYCLE_MS * 1.3);
  const timers = new VirtualSseTimers({ tickMs: TICK_MS });
  const cycles: Cycle[] = [];
  let i = 0;
  while (cycles.length < CYCLES && i < times.length) {
    let ended = false;
    let lastEventAt = -Infinity;
    let disconnectAt = NaN;
    let wrote = false;
    const sink: SseSink = {
      write(chunk) {
        wrote = true;
        if (chunk.includes('event: disconnecting')) disconnectAt = timers.now();
        else if (chunk.includes('event: ')) lastEventAt = timers.now();
        return true;
      },
      end: () => void (ended = true),
      abort: () => void (ended = true),
    };
    const s = new SseStream(sink, { heartbeatMs: HEARTBEAT_MS, cycleMs: CYCLE_MS, quietMs, maxBufferBytes: 1e12, random }, timers);
    let firstHeld = -1;
    while (!ended && i < times.length) {
      timers.advanceTo(times[i]!);
      if (ended) break;
      wrote = false;
      s.send(formatSseFrame({ id: String(i), event: 'output.message.delta', data: '{}' }));
      if (!wrote && firstHeld < 0) firstHeld = i;
      i++;
    }
    if (!ended) break;
    const held = firstHeld < 0 ? 0 : i - firstHeld;
    const reconnectAt = disconnectAt + RETRY_MS;
    cycles.push({ held, delayMs: held ? reconnectAt - times[firstHeld]! : 0, gapMs: disconnectAt - lastEventAt });
    if (firstHeld >= 0) i = firstHeld; // replayed on the next connection (since_id)
    timers.advanceTo(reconnectAt);
  }
  return cycles;
}

const pct = (n: number, d: number) => `${((100 * n) / d).toFixed(1)} %`;
const rows = [];
for (const [name, load] of Object.entries(LOADS)) {
  const now = run(load, 1000);
  const before = run(load, 0);
  const midBurst = now.filter((c) => c.held > 0);
  rows.push({
    load: name,
    cycles: now.length,
    quiet: pct(now.length - midBurst.length, now.length),
    'mid-burst': pct(midBurst.length, now.length),
    'held (max)': Math.max(0, ...midBurst.map((c) => c.held)),
    'added delay max ms': Math.round(Math.max(0, ...midBurst.map((c) => c.delayMs))),
    'min gap ms': Math.round(Math.min(...now.map((c) => c.gapMs))),
    'old rule: gap < 100 ms': pct(before.filter((c) => c.gapMs < DELTA_MS).length, before.length),
  });
}
console.table(rows);
