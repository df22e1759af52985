/**
 * What of "the rest of the turn" (llm-split.ts: outside the LLM call and GC) grew between two
 * buckets of a `bench/long-session/run.ts --cpu-prof` run: the main thread's self time per turn
 * by function, largest growth first, then what the functions not listed add up to (a growth
 * spread thinly over many functions has no one place to cut). The rest's socket writes are
 * listed apart from the others, as in the split.
 *
 *   node --import tsx bench/long-session/rest-diff.ts <results.json> <prof-dir>/<mode> [--from 100] [--to 5000] [--top 25]
 *
 * `--from`/`--to`: the bucket ending at that turn, `young` (the young sessions' bucket measured after
 * the old ones: the default `--from`), `padded` (the padded young sessions' of `--pad-young`) or
 * `last` (the run's last bucket: the default `--to`).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parseArgs } from 'node:util';
import { type CpuProfile, readCpuProfile, selfTimes } from '../lib/cpuprofile.js';
import { sampleKinds } from './llm-split.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { from: { type: 'string' }, to: { type: 'string' }, top: { type: 'string', default: '25' } },
});
const [resultsFile, profDir] = positionals;
if (!resultsFile || !profDir) throw new Error('usage: rest-diff.ts <results.json> <prof-dir>/<mode> [--from N] [--to N]');

interface ResultBucket {
  mode: string;
  from: number;
  to: number;
  young?: boolean;
  padKiB?: number;
  clockUs?: [number, number];
}
const results = JSON.parse(readFileSync(resultsFile, 'utf8')) as { args: { width: number; parallel: number }; buckets: ResultBucket[] };
const mode = basename(profDir);
const profiled = results.buckets.filter((b) => b.mode === mode && b.clockUs);
const old = profiled.filter((b) => !b.young);
/** A bucket by the turn it ends at, or `young` / `padded` (the young sessions' buckets measured after the old ones). */
const pick = (name: string): ResultBucket => {
  const b =
    name === 'young'
      ? profiled.find((x) => x.young && !x.padKiB)
      : name === 'padded'
        ? profiled.find((x) => x.young && x.padKiB)
        : name === 'last'
          ? old.at(-1)
          : old.find((x) => x.to === Number(name));
  if (!b) throw new Error(`no bucket "${name}" in ${resultsFile}`);
  return b;
};
const from = pick(values.from ?? 'young');
const to = pick(values.to ?? 'last');
const turnsPerBucket = results.args.width * results.args.parallel;

/** The main thread's profile: the one with the most samples. */
const found = readdirSync(profDir)
  .filter((f) => f.endsWith('.cpuprofile'))
  .map((f) => readCpuProfile(join(profDir, f)))
  .toSorted((a, b) => b.samples.length - a.samples.length)[0];
if (!found) throw new Error(`no CPU profile in ${profDir}`);
const main: CpuProfile = found;
const kindOf = sampleKinds(main);
const byId = new Map(main.nodes.map((n) => [n.id, n]));

/** Self ms per turn of the rest's functions (name and place), the socket writes marked. */
function restByFunction(clockUs: [number, number]): Map<string, number> {
  const out = new Map<string, number>();
  for (const [id, us] of selfTimes(main, { clockUs })) {
    const kind = kindOf(id);
    if (kind !== 'restMs' && kind !== 'writesMs') continue;
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    const key = `${kind === 'writesMs' ? '[write] ' : ''}${functionName || '(anonymous)'} ${url ? `${basename(url)}:${lineNumber + 1}` : ''}`;
    out.set(key, (out.get(key) ?? 0) + us / 1000 / turnsPerBucket);
  }
  return out;
}

const a = restByFunction(from.clockUs!);
const b = restByFunction(to.clockUs!);
const rows = [...new Set([...a.keys(), ...b.keys()])]
  .map((name) => ({ name, before: a.get(name) ?? 0, after: b.get(name) ?? 0 }))
  .toSorted((x, y) => y.after - y.before - (x.after - x.before));
const label = (x: ResultBucket) => `${x.from + 1}-${x.to}${x.young ? ' (young)' : ''}`;
const sum = (xs: typeof rows, k: 'before' | 'after') => xs.reduce((s, r) => s + r[k], 0);
const ms = (n: number) => n.toFixed(3).padStart(7);
console.log(`${mode}: the rest of the turn, self ms a turn, ${label(from)} → ${label(to)}`);
console.log(`${ms(sum(rows, 'before'))} ${ms(sum(rows, 'after'))} ${ms(sum(rows, 'after') - sum(rows, 'before'))}  in all`);
const top = Number(values.top);
for (const r of rows.slice(0, top)) console.log(`${ms(r.before)} ${ms(r.after)} ${ms(r.after - r.before)}  ${r.name}`);
const rest = rows.slice(top);
const grew = rest.filter((r) => r.after > r.before);
console.log(
  `${ms(sum(rest, 'before'))} ${ms(sum(rest, 'after'))} ${ms(sum(rest, 'after') - sum(rest, 'before'))}  the other ${rest.length} functions (${grew.length} grew, by at most ${ms(Math.max(0, ...grew.map((r) => r.after - r.before))).trim()} each)`,
);
