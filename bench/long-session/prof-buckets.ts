/**
 * Cuts the CPU profiles of a `bench/long-session/run.ts --cpu-prof` run into its buckets and
 * prints, per bucket and per thread (main, PGlite worker), the self time per turn by area and by
 * function, so an old bucket can be compared with the young one of the same run.
 *
 *   node --import tsx bench/long-session/prof-buckets.ts <results.json> <prof-dir>/<mode> [--top 25]
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { summariseCpuProfile } from '../lib/cpuprofile.js';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '25' } } });
const [resultsFile, profDir] = positionals;
if (!resultsFile || !profDir) throw new Error('usage: prof-buckets.ts <results.json> <prof-dir>/<mode>');
const top = Number(values.top);
const results = JSON.parse(readFileSync(resultsFile, 'utf8')) as {
  args: { width: number; parallel: number };
  buckets: { mode: string; from: number; to: number; young?: boolean; clockUs?: [number, number] }[];
};
const turnsPerBucket = results.args.width * results.args.parallel;
const files = readdirSync(profDir).filter((f) => f.endsWith('.cpuprofile'));
for (const b of results.buckets) {
  if (!b.clockUs) continue;
  console.log(`\n== ${b.mode} turns ${b.from + 1}-${b.to}${b.young ? ' (young)' : ''}: ms per turn`);
  for (const f of files) {
    const s = summariseCpuProfile(join(profDir, f), top, { clockUs: b.clockUs });
    const perTurn = (ms: number) => (ms / turnsPerBucket).toFixed(2).padStart(7);
    console.log(`-- ${f}: busy ${perTurn(s.totalMs - s.idleMs)}`);
    for (const r of s.byArea.slice(0, 12)) console.log(`   area ${perTurn(r.selfMs)}  ${r.name}`);
    for (const r of s.byFunction) console.log(`   fn   ${perTurn(r.selfMs)}  ${r.name}`);
  }
}
