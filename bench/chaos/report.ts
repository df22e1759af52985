import type { MachineInfo } from '../lib/machine.js';
import type { AuditReport, FaultFindings } from './audit.js';

/** The chaos run's result as Markdown (the tables of bench/README.md, "Chaos"). */
export interface RunSummary {
  command: string;
  machine: MachineInfo;
  sessions: number;
  pauseAfterIdleMs: number;
  runSeconds: number;
  sseReconnects: number;
  memory: { instance: string; peakKiB: number; rssKiB: number | null }[];
  audit: AuditReport;
}

const ms = (v: number | null) => (v === null ? '–' : `${(v / 1000).toFixed(1)} s`);

function faultRow(f: FaultFindings): string {
  return `| ${f.kind} | ${f.repetition} | ${f.target} | ${f.affected} | ${ms(f.recoveryFirstMs)} | ${ms(f.recoveryAllMs)} | ${f.unrecovered} | ${ms(f.restartToHealthyMs)} | ${f.status503} | ${f.status500} | ${f.noAnswer} | ${f.busy409} | ${ms(f.retryWaitMaxMs)} |`;
}

export function renderReport(s: RunSummary): string {
  const a = s.audit;
  const m = s.machine;
  const lines = [
    `Command: \`${s.command}\``,
    '',
    `Machine: ${m.cpus} × ${m.cpuModel}, ${m.memoryGiB} GiB, Node ${m.node}, commit ${m.gitCommit ?? '?'}, ${m.date}; ` +
      `${s.sessions} sessions (half post at once after session.idled, half after ${s.pauseAfterIdleMs} ms), ${Math.round(s.runSeconds)} s.`,
    '',
    '| turns posted (201) | logged | completed | failed | cancelled | stuck | lost | ran without a 201 | answered 5xx, ran anyway | events | duplicate ids | sequence gaps |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
    `| ${a.turns.posted} | ${a.turns.logged} | ${a.turns.completed} | ${a.turns.failed} | ${a.turns.cancelled} | ${a.turns.stuck} | ${a.turns.lost} | ${a.turns.unconfirmed} | ${a.turns.refusedThenRan} | ${a.events} | ${a.duplicateIds} | ${a.sequenceGaps} |`,
    '',
    '| tool calls | run twice | succeeded recorded as failed (answered, then SIGKILL) | two results | missing step events | SSE followers / reconnects | SSE received | lost | repeated | out of order |',
    '|---|---|---|---|---|---|---|---|---|---|',
    `| ${a.tools.calls} | ${a.tools.runTwice} | ${a.tools.succeededRecordedFailed} (${a.tools.answeredThenKilled}) | ${a.tools.duplicateResults} | ${a.missingStepEvents.total}${
      a.missingStepEvents.total
        ? ` (${Object.entries(a.missingStepEvents.byKind)
            .map(([k, n]) => `${k} ${n}`)
            .join(', ')})`
        : ''
    } | ${a.sse.followers} / ${s.sseReconnects} | ${a.sse.received} | ${a.sse.lost} | ${a.sse.repeated} | ${a.sse.outOfOrder} |`,
    '',
    '| requests | 5xx outside fault windows | 5xx inside | of which 503 | other 5xx inside | no answer outside / inside | 409 busy after session.idled outside / inside |',
    '|---|---|---|---|---|---|---|',
    `| ${a.http.requests} | ${a.http.outside5xx} | ${a.http.inside5xx} | ${a.http.inside503} | ${a.http.inside500} | ${a.http.noAnswerOutside} / ${a.http.noAnswerInside} | ${a.http.busyOutside} / ${a.http.busyInside} |`,
    '',
    '| fault | # | target | affected turns | recovery (first) | recovery (all) | unrecovered | restart → healthy | 503 | other 5xx | no answer | 409 busy | idempotent retry wait (max) |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...a.faults.map(faultRow),
    '',
    `RSS per instance (peak over its processes / at the end): ${s.memory
      .map((x) => `${x.instance} ${Math.round(x.peakKiB / 1024)} / ${x.rssKiB === null ? '–' : Math.round(x.rssKiB / 1024)} MiB`)
      .join(', ')}`,
  ];
  const notes = a.faults.filter((f) => f.note).map((f) => `- ${f.kind} #${f.repetition}: ${f.note}`);
  if (notes.length) lines.push('', ...notes);
  if (a.examples.length) lines.push('', 'Defects found (first ones):', '', ...a.examples.map((e) => `- ${e}`));
  return lines.join('\n') + '\n';
}
