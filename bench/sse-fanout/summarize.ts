/**
 * One markdown table over several result files of run.ts (what bench/README.md shows).
 *
 *   node --import tsx bench/sse-fanout/summarize.ts bench/results/sse-fanout-*.json
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

interface Step {
  offeredDeliveriesPerSec: number;
  appendedPerSec: number;
  deliveredPerSec: number;
  latencyMs: { p50: number; p99: number; max: number };
  appendMs: { p50: number; p99: number } | null;
  serverCpuShare: number | null;
  machineBusyShare: number | null;
  backgroundBusyShare: number | null;
}
interface Result {
  name: string;
  description: string;
  connectionsRequested: number;
  connectionsHeldAtEnd: number;
  connectsPerSec?: number;
  rssPerIdleConnKiB: number;
  heapUsedPerIdleConnBytes: number;
  idleServerCpuShare?: number | null;
  idleDbTransactionsPerSec?: number | null;
  steps: Step[];
}
interface Report {
  machine: { date: string };
  params: { connections: number; sessions: number; rate: number; streamsPerSession: number };
  results: Result[];
}

const pct = (x: number | null | undefined) => (x === null || x === undefined ? 'n/a' : `${Math.round(x * 100)} %`);
const n = (x: number) => Math.round(x).toLocaleString('en-US');

const lines = [
  '| run (file) | target | held / N | connects/s | RSS per idle stream (heap used) | idle server CPU, DB tx/s | delivered/s at R | p50 / p99 ms at R (append p99) | server CPU at R (µs per delivery) | peak delivered/s | machine busy at R (before) |',
  '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
];
for (const file of process.argv.slice(2)) {
  const r = JSON.parse(readFileSync(file, 'utf8')) as Report;
  for (const t of r.results) {
    const s = t.steps.find((x) => x.offeredDeliveriesPerSec === r.params.rate);
    // Peak: per step the smaller of sent and received (as run.ts computes it).
    const peak = Math.max(0, ...t.steps.map((x) => Math.min(x.deliveredPerSec, x.appendedPerSec * r.params.streamsPerSession)));
    lines.push(
      `| ${basename(file, '.json').replace('sse-fanout-', '')} | ${t.description} | ${n(t.connectionsHeldAtEnd)} / ${n(t.connectionsRequested)} | ${t.connectsPerSec ?? 'n/a'} | ` +
        `${t.rssPerIdleConnKiB} KiB (${(t.heapUsedPerIdleConnBytes / 1024).toFixed(1)} KiB) | ${pct(t.idleServerCpuShare)}${t.idleDbTransactionsPerSec != null ? `, ${n(t.idleDbTransactionsPerSec)}` : ''} | ` +
        `${s ? `${n(s.deliveredPerSec)} of ${n(s.offeredDeliveriesPerSec)}` : 'n/a'} | ${s ? `${s.latencyMs.p50} / ${s.latencyMs.p99}${s.appendMs ? ` (${s.appendMs.p99})` : ''}` : 'n/a'} | ` +
        `${pct(s?.serverCpuShare)}${s?.serverCpuShare != null && s.deliveredPerSec ? ` (${Math.round((s.serverCpuShare * 1e6) / s.deliveredPerSec)})` : ''} | ${n(peak)} | ${pct(s?.machineBusyShare)} (${pct(s?.backgroundBusyShare)}) |`,
    );
  }
}
process.stdout.write(lines.join('\n') + '\n');
