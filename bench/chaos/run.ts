/**
 * The chaos suite (issue 13), one command:
 *
 *   node --import tsx bench/chaos/run.ts [--sessions 20] [--faults kill-llm,kill-tool,term,nats-kill,pg-stop,freeze-instance,freeze-nats]
 *        [--repeat 2] [--fault-window 60] [--pause-after-idle 1000] [--baseline 20] [--no-write] [--count-js-api]
 *
 * Starts a private PostgreSQL, a 3-node NATS cluster (every stream at 3 replicas) and 3 service
 * instances (cluster.ts), runs the workload (workload.ts) for `--baseline` seconds without a fault,
 * then injects each fault in turn, `--repeat` times, one every `--fault-window` seconds
 * (faults.ts), stops posting, reads every session's log and audits it together with what the
 * SSE followers received (audit.ts). Prints the Markdown tables (report.ts) and writes
 * `bench/results/chaos-<date>.json` (with every failed request) and the tables as `.md` beside it. See bench/README.md, "Chaos". Out of the test run.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { oneOf, positiveInt } from '../lib/args.js';
import { machineInfo } from '../lib/machine.js';
import { buildIfStale, onInterrupt } from '../lib/process.js';
import { FAULT_KINDS, audit, type FaultRecord } from './audit.js';
import { ADMIN_KEY, startCluster } from './cluster.js';
import { injectFault } from './faults.js';
import { countJsApi, type JsApiCounts } from './js-api-counter.js';
import { renderReport } from './report.js';
import { startWorkload } from './workload.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const log = (msg: string) => process.stderr.write(`[chaos ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

const { values: args } = parseArgs({
  options: {
    sessions: { type: 'string', default: '20' },
    faults: { type: 'string', default: FAULT_KINDS.join(',') },
    repeat: { type: 'string', default: '2' },
    'fault-window': { type: 'string', default: '60' },
    'pause-after-idle': { type: 'string', default: '1000' },
    baseline: { type: 'string', default: '20' },
    'no-write': { type: 'boolean', default: false },
    'count-js-api': { type: 'boolean', default: false },
  },
});
const sessions = positiveInt('sessions', args.sessions!);
const faults = args.faults!.split(',').map((f) => oneOf('faults', f, FAULT_KINDS));
const repeat = positiveInt('repeat', args.repeat!);
const windowMs = positiveInt('fault-window', args['fault-window']!) * 1000;
const pauseAfterIdleMs = Number(args['pause-after-idle']);
const baselineMs = Number(args.baseline) * 1000;
if (!(pauseAfterIdleMs >= 0) || !(baselineMs >= 0)) throw new Error('--pause-after-idle and --baseline must be numbers >= 0');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<void> {
  buildIfStale(ROOT);
  const machine = machineInfo();
  const t0 = Date.now();
  const cluster = await startCluster({ instances: 3, log });
  onInterrupt(() => cluster.stop());
  try {
    const apiCounter = args['count-js-api'] ? await countJsApi(cluster.nats, log) : null;
    const workload = await startWorkload({
      instances: cluster.instances.map((i) => ({ name: i.name, base: i.base })),
      adminKey: ADMIN_KEY,
      sessions,
      pauseAfterIdleMs,
      toolUrl: cluster.tools.url,
      turnTimeoutMs: 90_000,
      log,
    });
    log(`workload: ${sessions} sessions running; ${baselineMs / 1000} s without a fault`);
    await sleep(baselineMs);
    const records: FaultRecord[] = [];
    for (let rep = 1; rep <= repeat; rep++) {
      for (const kind of faults) {
        const started = Date.now();
        records.push(await injectFault({ cluster, workload, log }, kind, rep));
        await sleep(Math.max(0, windowMs - (Date.now() - started)));
      }
    }
    log('stopping the workload, reading every log');
    const collected = await workload.finish(120_000);
    const jsApi: JsApiCounts | undefined = await apiCounter?.stop();
    if (jsApi) {
      const top = jsApi.kinds.slice(0, 12).map((k) => `${k.kind} ${k.total} (${k.perSecond}/s, peak ${k.peakSecond})`);
      log(`JetStream API calls in ${jsApi.seconds} s: ${top.join('; ')}`);
      log(`consumer creates+deletes per 10 s: ${jsApi.consumerChurnPer10s.join(' ')}`);
    }
    const report = audit({ ...collected, faults: records, tools: cluster.tools.runs() });
    const memory = cluster.instances.map((i) => ({ instance: i.name, ...i.memory() }));
    const markdown = renderReport({
      command: `node --import tsx bench/chaos/run.ts ${process.argv.slice(2).join(' ')}`.trim(),
      machine,
      sessions,
      pauseAfterIdleMs,
      runSeconds: (Date.now() - t0) / 1000,
      sseReconnects: collected.sseReconnects,
      memory,
      audit: report,
    });
    process.stdout.write(markdown);
    if (!args['no-write']) {
      const dir = join(ROOT, 'bench/results');
      mkdirSync(dir, { recursive: true });
      const file = join(dir, `chaos-${machine.date.replace(/[:.]/g, '-')}.json`);
      const options = { sessions, faults, repeat, windowMs, pauseAfterIdleMs, baselineMs };
      // The failed requests themselves, so a 5xx in the tables can be traced to its time and route.
      const failedRequests = collected.requests.filter((r) => r.status === 0 || r.status >= 500);
      const tools = cluster.tools.runs().filter((t) => t.hits > 1);
      writeFileSync(
        file,
        JSON.stringify({ machine, options, faults: records, memory, report, failedRequests, tools, jsApi }, null, 2) + '\n',
      );
      writeFileSync(file.replace(/\.json$/, '.md'), markdown);
      log(`results: ${file}`);
    }
  } finally {
    await cluster.stop();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    log(`chaos run failed: ${err instanceof Error ? err.stack : String(err)}`);
    process.exit(1);
  },
);
