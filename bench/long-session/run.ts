/**
 * Long-session benchmark (issue 26 item 2): one session (or `--parallel P` sessions in lockstep),
 * N sequential real-path turns each — the `openai_completions` provider (official openai SDK)
 * against bench/real-path's zero-latency fake, model → get_current_time → model, each turn sent
 * with POST …/messages and read on the session's SSE stream to `session.idled`. Per bucket of
 * turns (ending at turns 100, 1,000 and 5,000 by default, those ≤ N; plus the first bucket):
 * service CPU per turn (and PostgreSQL / nats-server in NATS mode), turn latency, and the
 * history the fake received (messages and bytes per request, ~tokens = bytes / 4). The ratio
 * last/first bucket is the figure of the issue (target ≤ 1.1× for the work outside building and
 * sending the LLM request; this measures the whole turn, request included). A long run outlasts
 * the machine's drift, so after the last bucket new sessions run the first ratio bucket again
 * (`y` in the table), and the ratio is also given against that bucket, measured minutes, not an
 * hour, before the last. Then the old sessions and young ones run in `--pairs` alternating
 * blocks of `--pair-width` turns (`po` / `py`), each young block on new sessions at that bucket's
 * last turn (turns 96-105 for turn 100): the paired ratio, the one least moved by a shared
 * machine's drift. With `--pad-young K`, new sessions whose first turns' messages carry K KiB of
 * text then run that bucket once more (`yp`): requests near an old session's size on young
 * sessions, so what grows with the request is told apart from what grows with the session.
 *
 *   node --import tsx bench/long-session/run.ts [--modes embedded,nats] [--turns 300] [--buckets 100,1000,5000]
 *        [--width 25] [--parallel 1] [--pairs 10] [--pair-width 10] [--pad-young KiB] [--env K=V]… [--cpu-prof] [--prof-dir DIR]
 *        [--no-write] [--label name]
 *
 * Run it under `flock /work/wt/bench.lock` on a shared machine. Results: a table on stdout and
 * bench/results/long-session-<date>.json. See bench/README.md ("Long session").
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { machineInfo } from '../lib/machine.js';
import { cpuDelta, onInterrupt, readCpuByCmdline, readSystemCpu, busyShare, readTreeCpu } from '../lib/process.js';
import { probe, probeDelta, type ProbeDelta } from './probe.js';
import { ROOT, startFake, startService, type Mode, type Service } from './service.js';
import { openSession, paddingMessages, type Session } from './session-client.js';

const { values: args } = parseArgs({
  options: {
    modes: { type: 'string', default: 'embedded,nats' },
    turns: { type: 'string', default: '300' },
    buckets: { type: 'string', default: '100,1000,5000' },
    width: { type: 'string', default: '25' },
    parallel: { type: 'string', default: '1' },
    env: { type: 'string', multiple: true, default: [] },
    'cpu-prof': { type: 'boolean', default: false },
    'prof-dir': { type: 'string' },
    'no-write': { type: 'boolean', default: false },
    label: { type: 'string', default: '' },
    pairs: { type: 'string', default: '10' },
    'pair-width': { type: 'string', default: '10' },
    'pad-young': { type: 'string' },
  },
});
const log = (msg: string) => process.stderr.write(msg + '\n');
const int = (name: string, v: string | undefined) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name}: ${v} is not a positive integer`);
  return n;
};
const modes = args.modes!.split(',').map((m) => {
  if (m !== 'embedded' && m !== 'nats') throw new Error(`--modes: unknown mode ${m}`);
  return m as Mode;
});
const turns = int('turns', args.turns);
const width = Math.min(int('width', args.width), turns);
const parallel = int('parallel', args.parallel);
const pairs = args.pairs === '0' ? 0 : int('pairs', args.pairs);
const pairWidth = int('pair-width', args['pair-width']);
const padKiB = args['pad-young'] === undefined ? 0 : int('pad-young', args['pad-young']);
/** Bucket ends: the first bucket, then every requested end within N (the last one at N if none is). */
const ends = [...new Set([width, ...args.buckets!.split(',').map((b) => int('buckets', b)), turns])]
  .filter((e) => e >= width && e <= turns)
  .sort((a, b) => a - b);
const extraEnv = Object.fromEntries(
  args.env!.map((kv) => {
    const eq = kv.indexOf('=');
    if (eq < 1) throw new Error(`--env: ${kv} is not K=V`);
    return [kv.slice(0, eq), kv.slice(eq + 1)];
  }),
);

interface Bucket {
  mode: Mode;
  /** Turns (first, last] of every session. */
  from: number;
  to: number;
  /** Measured on new sessions after the last bucket: the first bucket again, in the machine's state at the end. */
  young?: boolean;
  /**
   * Young sessions whose first turns' messages carry this many KiB of text (`--pad-young`):
   * requests near an old session's size on a young session, to tell what grows with the request
   * from what grows with the session.
   */
  padKiB?: number;
  /** Measured in alternating blocks after the last bucket: the old sessions', or young ones' from the first ratio bucket on. */
  paired?: 'old' | 'young';
  serviceCpuMsPerTurn: number;
  postgresCpuMsPerTurn: number | null;
  natsCpuMsPerTurn: number | null;
  /**
   * The fake vendor's CPU a turn: not the service's, but it shares the machine's two cores, and
   * what it spends on a request grows with the request's bytes (see fake-llm.ts's readChatBody).
   */
  fakeCpuMsPerTurn?: number;
  turnMs: { mean: number; p50: number; p95: number };
  /** What the fake received per LLM request in the bucket (two requests per turn). */
  messagesPerRequest: number;
  /** Compactions in the bucket: the fake's summary requests (they count in the bytes too). */
  compactions: number;
  bytesPerTurn: number;
  approxTokensPerTurn: number;
  machineBusy: number | null;
  /** Turns of the bucket that ended in turn.failed. */
  failed: number;
  /** Writes of the service process, and with METRICS_TOKEN its GC, heap, snapshot writes and events read (probe.ts); not for paired blocks. */
  probed?: ProbeDelta;
  /** With --cpu-prof: the bucket's window on the monotonic clock (µs), to cut the profile (prof-buckets.ts). */
  clockUs?: [number, number];
}

const round1 = (n: number) => Math.round(n * 10) / 10;
const pct = (xs: number[], p: number) =>
  xs.slice().sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? NaN;

/** What was measured over some turns: CPU seconds by process, latencies, the fake's requests. */
interface Sample {
  serviceSec: number;
  depsSec: number[];
  fakeSec: number;
  latencies: number[];
  requests: { m: number; b: number; s?: number }[];
  busy: number[];
  failed: number;
}

const emptySample = (): Sample => ({ serviceSec: 0, depsSec: [], fakeSec: 0, latencies: [], requests: [], busy: [], failed: 0 });

/** Runs turns `done + 1` to `end` of every session and adds what they cost to `into`. */
async function measure(
  s: Service,
  fake: Awaited<ReturnType<typeof startFake>>,
  sessions: Session[],
  done: number,
  end: number,
  into: Sample,
) {
  const svc0 = readTreeCpu(s.proc.pid);
  const deps0 = s.deps.map((d) => readCpuByCmdline(d));
  const sys0 = readSystemCpu();
  const fake0 = fake.proc.cpuSeconds();
  const fakeAt = fake.requests.length;
  const failed0 = sessions.reduce((a, x) => a + x.failures, 0);
  while (done < end) {
    done++;
    into.latencies.push(...(await Promise.all(sessions.map((x) => x.turn(done)))));
  }
  into.serviceSec += cpuDelta(svc0, readTreeCpu(s.proc.pid));
  for (const [i, d] of s.deps.entries()) into.depsSec[i] = (into.depsSec[i] ?? 0) + cpuDelta(deps0[i]!, readCpuByCmdline(d));
  into.fakeSec += (fake.proc.cpuSeconds() ?? 0) - (fake0 ?? 0);
  into.requests.push(...fake.requests.slice(fakeAt));
  const busy = busyShare(sys0, readSystemCpu());
  if (busy !== null) into.busy.push(busy);
  into.failed += sessions.reduce((a, x) => a + x.failures, 0) - failed0;
}

type Mark = Pick<Bucket, 'young' | 'padKiB' | 'paired'>;

function toBucket(mode: Mode, from: number, to: number, m: Sample, mark: Mark = {}): Bucket {
  const n = m.latencies.length;
  const ms = (sec: number) => round1((sec * 1000) / n);
  const bytes = m.requests.reduce((a, r) => a + r.b, 0);
  const turnRequests = m.requests.filter((r) => r.s !== 1);
  return {
    mode,
    from,
    to,
    ...mark,
    serviceCpuMsPerTurn: ms(m.serviceSec),
    postgresCpuMsPerTurn: m.depsSec[0] !== undefined ? ms(m.depsSec[0]) : null,
    natsCpuMsPerTurn: m.depsSec[1] !== undefined ? ms(m.depsSec[1]) : null,
    fakeCpuMsPerTurn: ms(m.fakeSec),
    turnMs: {
      mean: round1(m.latencies.reduce((a, b) => a + b, 0) / n),
      p50: round1(pct(m.latencies, 50)),
      p95: round1(pct(m.latencies, 95)),
    },
    messagesPerRequest: round1(turnRequests.reduce((a, r) => a + r.m, 0) / Math.max(1, turnRequests.length)),
    compactions: m.requests.length - turnRequests.length,
    bytesPerTurn: Math.round(bytes / n),
    approxTokensPerTurn: Math.round(bytes / 4 / n),
    machineBusy: m.busy.length ? m.busy.reduce((a, b) => a + b, 0) / m.busy.length : null,
    failed: m.failed,
  };
}

/** Brings `sessions` from turn `done` to `end` without measuring. */
async function advance(sessions: Session[], done: number, end: number): Promise<void> {
  while (done < end) {
    done++;
    await Promise.all(sessions.map((x) => x.turn(done)));
  }
}

/**
 * Runs `sessions` from turn `done` to `end`, measuring the last `width` turns as one bucket.
 * `mark.young`: the bucket of fresh sessions measured after the old ones (same machine state).
 */
async function runBucket(
  mode: Mode,
  s: Service,
  fake: Awaited<ReturnType<typeof startFake>>,
  sessions: Session[],
  done: number,
  end: number,
  mark: Mark = {},
): Promise<Bucket> {
  const from = end - width;
  await advance(sessions, done, from);
  const probe0 = await probe(s.proc.pid, s.base, extraEnv['METRICS_TOKEN']);
  // The monotonic clock V8's CPU profiles use (µs), so a --cpu-prof profile can be cut to the bucket.
  const clockFromUs = Number(process.hrtime.bigint() / 1000n);
  const sample = emptySample();
  await measure(s, fake, sessions, from, end, sample);
  const bucket: Bucket = {
    ...toBucket(mode, from, end, sample, mark),
    probed: probeDelta(probe0, await probe(s.proc.pid, s.base, extraEnv['METRICS_TOKEN']), width * parallel),
    ...(args['cpu-prof'] ? { clockUs: [clockFromUs, Number(process.hrtime.bigint() / 1000n)] } : {}),
  };
  const what = mark.padKiB ? ` (young sessions, ${mark.padKiB} KiB of padding)` : mark.young ? ' (young sessions, after the old)' : '';
  log(`[${mode}] turns ${from + 1}-${end}${what}: ${JSON.stringify(bucket)}`);
  return bucket;
}

/**
 * The old sessions against young ones in `pairs` alternating blocks of `pairWidth` turns: both
 * sides see the same drift of a shared machine (a single young bucket measured after the old one
 * moved more than the changes it was to judge, issue 26's runs of 2026-11-30). Each young block
 * runs on new sessions grown, unmeasured, to just before `youngAt`, so every block measures
 * turns around `youngAt` however many pairs run (young sessions that ran every block would
 * age by pairs × pairWidth turns).
 */
async function runPairs(
  mode: Mode,
  s: Service,
  fake: Awaited<ReturnType<typeof startFake>>,
  old: Session[],
  oldDone: number,
  openYoung: () => Promise<Session[]>,
  youngAt: number,
): Promise<Bucket[]> {
  const youngFrom = Math.max(0, youngAt - Math.ceil(pairWidth / 2));
  const samples = { old: emptySample(), young: emptySample() };
  for (let i = 0; i < pairs; i++) {
    const young = await openYoung();
    try {
      await advance(young, 0, youngFrom);
      await measure(s, fake, old, oldDone + i * pairWidth, oldDone + (i + 1) * pairWidth, samples.old);
      await measure(s, fake, young, youngFrom, youngFrom + pairWidth, samples.young);
    } finally {
      for (const x of young) x.close();
    }
  }
  const buckets = [
    toBucket(mode, oldDone, oldDone + pairs * pairWidth, samples.old, { paired: 'old' }),
    toBucket(mode, youngFrom, youngFrom + pairWidth, samples.young, { paired: 'young' }),
  ];
  for (const b of buckets) log(`[${mode}] turns ${b.from + 1}-${b.to} (${b.paired}, paired): ${JSON.stringify(b)}`);
  return buckets;
}

/** The bucket ratios start from: the one ending at turn 100 or later (the first ones carry the warm-up), else the first. */
const ratioBase = (mine: Bucket[]) => mine.find((b) => !b.young && !b.paired && b.to >= 100 && b.to < lastBucket(mine).to) ?? mine[0]!;
/** The last bucket of the run itself (not the young or paired ones measured after it). */
const lastBucket = (mine: Bucket[]) => mine.filter((b) => !b.young && !b.paired).at(-1)!;

async function runMode(mode: Mode, fake: Awaited<ReturnType<typeof startFake>>): Promise<Bucket[]> {
  const profDir = args['cpu-prof'] ? (args['prof-dir'] ?? mkdtempSync(join(tmpdir(), 'bench-long-session-prof-'))) : undefined;
  const flags = profDir ? ['--cpu-prof', '--cpu-prof-dir', join(profDir, mode)] : [];
  log(`[${mode}] starting …`);
  const s = await startService(mode, fake.origin, extraEnv, flags);
  onInterrupt(() => s.stop());
  const open = (padding?: readonly string[]) => Promise.all(Array.from({ length: parallel }, () => openSession(s, padding)));
  const sessions = await open();
  const out: Bucket[] = [];
  try {
    let done = 0;
    for (const end of ends) {
      out.push(await runBucket(mode, s, fake, sessions, done, end));
      done = end;
    }
    // The machine drifts over a long run: the first bucket is measured again, on new sessions, now.
    const base = ratioBase(out);
    if (base !== out.at(-1)) {
      const youngBucket = async (mark: Mark, padding?: readonly string[]) => {
        const young = await open(padding);
        try {
          return await runBucket(mode, s, fake, young, 0, base.to, mark);
        } finally {
          for (const x of young) x.close();
        }
      };
      out.push(await youngBucket({ young: true }));
      if (padKiB) out.push(await youngBucket({ young: true, padKiB }, paddingMessages(padKiB * 1024)));
      if (pairs > 0) out.push(...(await runPairs(mode, s, fake, sessions, done, open, base.to)));
    }
  } finally {
    for (const x of sessions) x.close();
    await s.stop();
  }
  if (profDir) log(`[${mode}] CPU profile in ${join(profDir, mode)}`);
  return out;
}

async function main(): Promise<void> {
  // Read before the run: what it measured is the commit it built, not the one checked out when it ends.
  const machine = machineInfo();
  const fake = await startFake();
  onInterrupt(() => fake.proc.stop(5000));
  const buckets: Bucket[] = [];
  try {
    for (const mode of modes) buckets.push(...(await runMode(mode, fake)));
  } finally {
    await fake.proc.stop(5000);
  }
  const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;
  const ratios = modes.flatMap((mode) => {
    const mine = buckets.filter((b) => b.mode === mode);
    const comparisons = [
      ...[ratioBase(mine), mine.find((b) => b.young && !b.padKiB), mine.find((b) => b.padKiB)]
        .filter((b) => b !== undefined)
        .map((first) => [first, lastBucket(mine)] as const),
      ...(mine.some((b) => b.paired) ? [[mine.find((b) => b.paired === 'young')!, mine.find((b) => b.paired === 'old')!] as const] : []),
    ];
    return comparisons.map(([first, last]) => ({
      mode,
      buckets: `${first.from + 1}-${first.to}${first.padKiB ? ` (young, ${first.padKiB} KiB of padding)` : first.young ? ' (young, after)' : first.paired ? ' (young, paired)' : ''} → ${last.from + 1}-${last.to}${last.paired ? ' (paired)' : ''}`,
      serviceCpu: ratio(last.serviceCpuMsPerTurn, first.serviceCpuMsPerTurn),
      turnMsMean: ratio(last.turnMs.mean, first.turnMs.mean),
      bytesPerTurn: ratio(last.bytesPerTurn, first.bytesPerTurn),
    }));
  });
  console.log(
    'mode      turns        svc ms/turn  pg ms  nats ms  fake ms  turn ms mean/p50/p95   msgs/req  compactions  ~tokens/turn  busy',
  );
  for (const b of buckets) {
    console.log(
      `${b.mode.padEnd(9)} ${`${b.from + 1}-${b.to}${b.padKiB ? ' yp' : b.young ? ' y' : b.paired ? ` p${b.paired[0]}` : ''}`.padEnd(12)} ${String(b.serviceCpuMsPerTurn).padStart(11)}  ${String(b.postgresCpuMsPerTurn ?? '-').padStart(5)}  ${String(b.natsCpuMsPerTurn ?? '-').padStart(7)}  ${String(b.fakeCpuMsPerTurn ?? '-').padStart(7)}  ${`${b.turnMs.mean}/${b.turnMs.p50}/${b.turnMs.p95}`.padEnd(22)} ${String(b.messagesPerRequest).padStart(8)}  ${String(b.compactions).padStart(11)}  ${String(b.approxTokensPerTurn).padStart(12)}  ${b.machineBusy === null ? '-' : Math.round(b.machineBusy * 100) + ' %'}`,
    );
  }
  for (const r of ratios)
    console.log(
      `${r.mode}: last/first bucket (${r.buckets}): service CPU ×${r.serviceCpu}, turn latency ×${r.turnMsMean}, request bytes ×${r.bytesPerTurn}`,
    );
  if (!args['no-write']) {
    const dir = join(ROOT, 'bench/results');
    mkdirSync(dir, { recursive: true });
    const file = join(
      dir,
      `long-session-${new Date().toISOString().slice(0, 16).replace(/:/g, '')}${args.label ? `-${args.label}` : ''}.json`,
    );
    writeFileSync(
      file,
      JSON.stringify({ args: { turns, width, parallel, ends, env: extraEnv }, machine, buckets, ratios }, null, 2) + '\n',
    );
    log(`results in ${file}`);
  }
}

await main();
