/**
 * Summarises a `perf` profile of a service process (real CPU time: `perf` samples a thread only
 * while it runs, where V8's `--cpu-prof` also charges the time a thread waits descheduled inside
 * a syscall; bench/README.md, "Where the CPU goes, measured with perf"). Record with the service
 * started with `--perf-basic-prof` (run.ts: `--node-option=--perf-basic-prof`), then:
 *
 *   perf record -e cpu-clock -F 997 -g -p <service pid> -o perf.data -- sleep 15
 *   perf script -i perf.data -F tid,ip,sym,dso > perf.txt
 *   node --import tsx bench/real-path/perf-summary.ts perf.txt <service pid>
 *
 * Prints the share of the process's samples by owner: each main-thread sample goes to the
 * nearest frame (from the leaf) of a package or of src/ (Node's internals go to their caller;
 * its bundled undici and web streams, i.e. `fetch`, are named apart); other threads are split
 * into GC helpers, the optimising compiler and the rest.
 */
import { readFileSync } from 'node:fs';

const [file, pidArg] = process.argv.slice(2);
if (!file || !pidArg) throw new Error('usage: perf-summary.ts <perf script output> <pid>');
const pid = Number(pidArg);

interface Frame {
  sym: string;
  dso: string;
}

const samples: { tid: number; frames: Frame[] }[] = [];
for (const block of readFileSync(file, 'utf8').split('\n\n')) {
  const lines = block.split('\n').filter(Boolean);
  if (!lines.length) continue;
  const tid = Number(lines[0]!.trim().split(/\s+/)[0]);
  const frames = lines.slice(1).map((l) => {
    const m = /^[0-9a-f]+ (.*) \((.*)\)$/.exec(l.trim());
    return m ? { sym: m[1]!, dso: m[2]! } : { sym: l.trim(), dso: '' };
  });
  samples.push({ tid, frames });
}

const GC = /v8::internal::(Heap::|Scaveng|MarkCompact|ConcurrentMarking|Sweeper|.*GarbageCollect)/;

/** The owner of a JS frame: `npm:<package>`, `src/<folder>/` (or actors/, schemas/), `undici (fetch)`, `web streams`, or `node:*`. */
function ownerOf(sym: string): string | undefined {
  if (!sym.startsWith('JS:')) return undefined;
  const url = (/ (\S+):\d+:\d+$/.exec(sym)?.[1] ?? '').replace(/^file:\/\//, '');
  const inModules = url.lastIndexOf('/node_modules/');
  if (inModules >= 0) {
    const parts = url.slice(inModules + 14).split('/');
    return `npm:${parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]}`;
  }
  // src/, and the top-level actors/ and schemas/ (a checkout's own folders; not Node's lib/).
  const src = /\/(src|actors|schemas)\//.exec(url)?.index ?? -1;
  if (src >= 0 && !url.startsWith('node:')) {
    const parts = url.slice(src + 1).split('/');
    return parts.length > 2 ? `${parts[0]}/${parts[1]}/` : parts.join('/');
  }
  if (url.includes('deps/undici')) return 'undici (fetch)';
  if (url.includes('webstreams')) return 'web streams';
  return url.startsWith('node:') ? 'node:' : 'js';
}

function threadKind(frames: Frame[]): string {
  if (frames.some((f) => GC.test(f.sym))) return 'GC helper threads';
  if (frames.some((f) => /OptimizingCompileDispatcher|OptimizedCompilationJob/.test(f.sym))) return 'JIT: optimising compiler threads';
  return 'other threads';
}

const shares = new Map<string, number>();
const add = (k: string) => shares.set(k, (shares.get(k) ?? 0) + 1);
for (const { tid, frames } of samples) {
  if (tid !== pid) {
    add(threadKind(frames));
    continue;
  }
  if (frames.some((f) => GC.test(f.sym))) {
    add('GC on the main thread');
    continue;
  }
  let owner: string | undefined;
  let internal: string | undefined;
  for (const f of frames) {
    const o = ownerOf(f.sym);
    if (!o) continue;
    if (o === 'node:' || o === 'js') {
      internal ??= o;
      continue;
    }
    owner = o;
    break;
  }
  add(owner ?? (internal ? 'Node internals only (microtask and tick queues, timers)' : 'native only (socket reads, uWS, malloc)'));
}

const total = samples.length;
process.stdout.write(`${total} samples; main thread ${samples.filter((s) => s.tid === pid).length}\n`);
for (const [k, v] of [...shares].sort((a, b) => b[1] - a[1]).slice(0, 40)) {
  process.stdout.write(`${((100 * v) / total).toFixed(1).padStart(5)} %  ${k}\n`);
}
