import { readFileSync, writeFileSync } from 'node:fs';

/** Writes bench/results/sse-scale-<stamp>.json and a Markdown summary beside it. */
export function writeResults(dir: string, label: string, result: any): { json: string; md: string } {
  const stamp = new Date().toISOString().slice(0, 16).replace(':', '');
  const base = `${dir}/sse-scale-${stamp}${label ? `-${label}` : ''}`;
  writeFileSync(`${base}.json`, JSON.stringify(result, null, 2) + '\n');
  writeFileSync(`${base}.md`, summary(result));
  return { json: `${base}.json`, md: `${base}.md` };
}

const fmt = (x: number | null | undefined) => (x === null || x === undefined ? '–' : String(x));

/** Rewrites the .md of a results file (after a change to the summary):  node --import tsx bench/sse-scale/report.ts <json> */
if (process.argv[1]?.endsWith('report.ts') && process.argv[2]) {
  const file = process.argv[2];
  writeFileSync(file.replace(/\.json$/, '.md'), summary(JSON.parse(readFileSync(file, 'utf8'))));
}

export function summary(r: any): string {
  const m = r.machine;
  const out: string[] = [
    `# bench/sse-scale ${r.label ? `(${r.label}) ` : ''}— ${m.date}`,
    '',
    `Command: \`${r.command}\``,
    `Commit ${m.gitCommit}${m.uncommittedSourceFiles ? ` (+${m.uncommittedSourceFiles} uncommitted source files)` : ''}; ${m.cpuModel}, ${m.cpus} cores; load average before ${r.loadBefore.join(' ')}, after ${r.loadAfter.join(' ')}.`,
    `${r.options.instances} instances, ${r.sessions} sessions × ${r.options.followersPerSession} followers, cycling ${r.options.cycling ? `on (SSE_CYCLE_MS ${r.options.cycleMs})` : 'off'}, turns on ${r.turnSessions} sessions (\`${r.options.turnText}\`, every ${r.options.turnGapMs} ms).`,
    '',
    '## Idle streams (heartbeats only)',
    '',
    '| target | streams | RSS KiB/stream (total) | heap KiB/stream | % core per 50k (total) | worst instance KiB/stream | worst instance % core/50k | ratio ours/bare KiB | ratio CPU |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const s of r.idle as any[]) {
    const bare = (r.bareIdle as any[] | undefined)?.find((b) => b.total.streams === s.total.streams);
    const worstKib = Math.max(...s.rows.map((x: any) => x.kibPerStream ?? 0));
    const worstCpu = Math.max(...s.rows.map((x: any) => x.corePctPer50k ?? 0));
    const ratio = (a: number | null, b: number | null) => (a !== null && b ? Math.round((a / b) * 10) / 10 : null);
    out.push(
      `| service | ${s.total.streams} | ${fmt(s.total.kibPerStream)} | ${fmt(s.total.heapKibPerStream)} | ${fmt(s.total.corePctPer50k)} | ${fmt(worstKib)} | ${fmt(Math.round(worstCpu * 100) / 100)} | ${fmt(ratio(s.total.kibPerStream, bare?.total.kibPerStream ?? null))} | ${fmt(ratio(s.total.corePctPer50k, bare?.total.corePctPer50k ?? null))} |`,
    );
    if (bare)
      out.push(
        `| bare uWS | ${bare.total.streams} | ${fmt(bare.total.kibPerStream)} | ${fmt(bare.total.heapKibPerStream)} | ${fmt(bare.total.corePctPer50k)} | | | | |`,
      );
  }
  out.push(
    '',
    '## With turns running',
    '',
    '| streams | deliveries | p50 ms | p99 ms | max ms | turns posted |',
    '|---:|---:|---:|---:|---:|---:|',
  );
  for (const t of r.turns as any[])
    out.push(`| ${t.streams} | ${t.delivered} | ${t.latency.p50} | ${t.latency.p99} | ${t.latency.max} | ${t.posted} |`);
  if (r.audit) {
    const a = r.audit;
    out.push(
      '',
      `Audit (${a.audited} streams of ${a.sessions} sessions against the log): lost ${a.lost}, duplicated ${a.dups}, streams losing ${a.streamsLosing}, streams duplicating ${a.streamsDuplicating}; reconnects ${r.reconnects}, cycles seen ${r.cycled}.`,
    );
  }
  if (r.kill)
    out.push(
      '',
      `Kill: ${r.kill.instance} SIGKILLed with ${r.kill.streams} streams open; all back in ${r.kill.recoverMs} ms (${r.kill.reopened} reconnects).`,
    );
  if (r.failures && Object.keys(r.failures).length) out.push('', `Stream failures: ${JSON.stringify(r.failures)}`);
  return out.join('\n') + '\n';
}
