/**
 * Cuts the CPU profiles of a `bench/long-session/run.ts --cpu-prof` run into its buckets and
 * prints, per bucket and per thread (main, PGlite worker), the self time per turn by area and by
 * function, so an old bucket can be compared with the young one of the same run; and the main
 * thread's split into the LLM call, GC and the rest of the turn (llm-split.ts), with the rest's
 * ratio last bucket / young bucket (issue 26's ≤ 1.1×), and / the young bucket of padded requests (`--pad-young`).
 *
 *   node --import tsx bench/long-session/prof-buckets.ts <results.json> <prof-dir>/<mode> [--top 25]
 */
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parseArgs } from 'node:util';
import { readCpuProfile, summariseCpuProfile } from '../lib/cpuprofile.js';
import { llmSplit, type LlmSplit } from './llm-split.js';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '25' } } });
const [resultsFile, profDir] = positionals;
if (!resultsFile || !profDir) throw new Error('usage: prof-buckets.ts <results.json> <prof-dir>/<mode>');
const top = Number(values.top);
const results = JSON.parse(readFileSync(resultsFile, 'utf8')) as {
  args: { width: number; parallel: number };
  buckets: { mode: string; from: number; to: number; young?: boolean; padKiB?: number; clockUs?: [number, number] }[];
};
const turnsPerBucket = results.args.width * results.args.parallel;
// Each profile read once: every bucket cuts its window out of the same parsed profiles.
const profiles = readdirSync(profDir)
  .filter((f) => f.endsWith('.cpuprofile'))
  .map((f) => ({ f, profile: readCpuProfile(join(profDir, f)) }));
const perTurn = (ms: number) => (ms / turnsPerBucket).toFixed(2).padStart(7);
/** The main thread's profile: the one with the most samples of the run. */
const main = profiles.toSorted((a, b) => b.profile.samples.length - a.profile.samples.length)[0]?.profile;
const splits: { bucket: (typeof results.buckets)[number]; split: LlmSplit }[] = [];
// The profiles of one mode's service (`<prof-dir>/<mode>`): only that mode's buckets.
const mode = basename(profDir);
for (const b of results.buckets) {
  if (!b.clockUs || b.mode !== mode) continue;
  const what = b.padKiB ? ` (young, ${b.padKiB} KiB of padding)` : b.young ? ' (young)' : '';
  console.log(`\n== ${b.mode} turns ${b.from + 1}-${b.to}${what}: ms per turn`);
  for (const { f, profile } of profiles) {
    const s = summariseCpuProfile(profile, top, { clockUs: b.clockUs });
    console.log(`-- ${f}: busy ${perTurn(s.totalMs - s.idleMs)}`);
    for (const r of s.byArea.slice(0, 12)) console.log(`   area ${perTurn(r.selfMs)}  ${r.name}`);
    for (const r of s.byFunction) console.log(`   fn   ${perTurn(r.selfMs)}  ${r.name}`);
  }
  if (main) {
    const split = llmSplit(main, b.clockUs);
    splits.push({ bucket: b, split });
    console.log(
      `-- main thread: LLM call ${perTurn(split.llmMs)}, GC ${perTurn(split.gcMs)}, ` +
        `the rest's socket writes ${perTurn(split.writesMs)}, the rest of the turn ${perTurn(split.restMs)}`,
    );
  }
}
const last = splits.filter((x) => !x.bucket.young).at(-1);
const youngOnes = [splits.find((x) => x.bucket.young && !x.bucket.padKiB), splits.find((x) => x.bucket.padKiB)];
for (const young of youngOnes) {
  if (!young || !last) continue;
  const r = (a: number, b: number) => (a / b).toFixed(2);
  const padded = young.bucket.padKiB ? ` (${young.bucket.padKiB} KiB of padding)` : '';
  console.log(
    `\n${last.bucket.mode}: turns ${last.bucket.from + 1}-${last.bucket.to} / young ${young.bucket.from + 1}-${young.bucket.to}${padded}: ` +
      `the rest of the turn ×${r(last.split.restMs, young.split.restMs)} ` +
      `(with its socket writes ×${r(last.split.restMs + last.split.writesMs, young.split.restMs + young.split.writesMs)}), ` +
      `the LLM call ×${r(last.split.llmMs, young.split.llmMs)}, GC ×${r(last.split.gcMs, young.split.gcMs)}`,
  );
}
