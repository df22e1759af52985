/**
 * Breaks down a heap profile written by bench/real-path/alloc-sampler.ts (run the service with
 * `--from-source` so frames name src/ files): bytes by package of the allocating frame, by our
 * nearest frame (the innermost src/ function on the stack: what of ours allocated or called the
 * library that did), and the top allocating functions. With the sampler's `.json` beside the
 * profile, every figure is also given in KiB per conversation.
 *
 *   node --import tsx bench/real-path/alloc-report.ts /tmp/alloc.heapprofile [--top 25] [--json out.json] [--against before.heapprofile]
 *
 * `--against` adds the rows (our nearest frame, allocating function) that changed most in KiB
 * per conversation from that profile to this one.
 */
import type { HeapProfiler } from 'node:inspector';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

type ProfileNode = HeapProfiler.SamplingHeapProfileNode;
type CallFrame = ProfileNode['callFrame'];

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '25' }, json: { type: 'string' }, against: { type: 'string' } },
});
const file = positionals[0];
if (!file) throw new Error('usage: alloc-report.ts <file.heapprofile> [--top N] [--json out.json] [--against before.heapprofile]');
const top = Number(values.top);

/** Our top-level folders: a frame in one of them is ours. */
const OURS = ['/src/', '/actors/', '/schemas/'];
const ourDir = (url: string) => (url.includes('/node_modules/') ? -1 : Math.max(...OURS.map((d) => url.lastIndexOf(d))));

/** node_modules/<pkg> (scoped too), src/<dir> (actors/, schemas/), node:internal, or (V8) for frames without a url. */
function packageOf(url: string): string {
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const parts = url.slice(nm + 14).split('/');
    return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
  }
  const at = ourDir(url);
  if (at >= 0) {
    const [top, dir] = url.slice(at + 1).split('/');
    return dir?.endsWith('.ts') ? `${top}/` : `${top}/${dir}`;
  }
  if (url.startsWith('node:')) return 'node (internal)';
  return url ? 'other' : '(V8 / native)';
}

function where(f: CallFrame): string {
  const short = f.url.replace(/^.*\/(node_modules|src|actors|schemas)\//, '$1/');
  return `${f.functionName || '(anonymous)'} ${short}:${f.lineNumber + 1}`;
}

const isOurs = (f: CallFrame) => ourDir(f.url) >= 0;
const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);

interface Breakdown {
  total: number;
  conversations: number | null;
  byPackage: Map<string, number>;
  byOurFrame: Map<string, number>;
  byFunction: Map<string, number>;
}

function breakdown(profileFile: string): Breakdown {
  const head = (JSON.parse(readFileSync(profileFile, 'utf8')) as { head: ProfileNode }).head;
  const meta = existsSync(`${profileFile}.json`)
    ? (JSON.parse(readFileSync(`${profileFile}.json`, 'utf8')) as { conversations: number | null })
    : null;
  const b: Breakdown = {
    total: 0,
    conversations: meta?.conversations ?? null,
    byPackage: new Map(),
    byOurFrame: new Map(),
    byFunction: new Map(),
  };
  const walk = (n: ProfileNode, ours: string): void => {
    const here = isOurs(n.callFrame) ? where(n.callFrame) : ours;
    if (n.selfSize > 0) {
      b.total += n.selfSize;
      add(b.byPackage, packageOf(n.callFrame.url), n.selfSize);
      add(b.byOurFrame, here, n.selfSize);
      add(b.byFunction, where(n.callFrame), n.selfSize);
    }
    for (const c of n.children) walk(c, here);
  };
  walk(head, '(no frame of ours)');
  return b;
}

const now = breakdown(file);
const { total } = now;
const conv = now.conversations;
const rows = (m: Map<string, number>, n: number) =>
  [...m]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([name, bytes]) => ({ name, bytes, share: bytes / total, kibPerConversation: conv ? bytes / 1024 / conv : null }));

/** Rows whose KiB per conversation changed most from `before` (both profiles need their conversation count). */
function changes(before: Breakdown, key: 'byOurFrame' | 'byFunction', n: number) {
  const per = (b: Breakdown, name: string) => (b[key].get(name) ?? 0) / 1024 / b.conversations!;
  const names = new Set([...before[key].keys(), ...now[key].keys()]);
  return [...names]
    .map((name) => ({ name, beforeKiB: per(before, name), afterKiB: per(now, name) }))
    .sort((a, b) => Math.abs(b.afterKiB - b.beforeKiB) - Math.abs(a.afterKiB - a.beforeKiB))
    .slice(0, n);
}
const before = values.against ? breakdown(values.against) : null;
const compared =
  before?.conversations && conv
    ? {
        against: values.against,
        mibPerConversationBefore: before.total / 1048576 / before.conversations,
        byOurFrame: changes(before, 'byOurFrame', top),
        byFunction: changes(before, 'byFunction', top),
      }
    : null;

const report = {
  file,
  totalMiB: total / 1048576,
  conversations: conv,
  mibPerConversation: conv ? total / 1048576 / conv : null,
  byPackage: rows(now.byPackage, top),
  byOurFrame: rows(now.byOurFrame, top),
  byFunction: rows(now.byFunction, top),
  compared,
};

const fmt = (r: (typeof report.byPackage)[number]) =>
  `${(100 * r.share).toFixed(1).padStart(5)} %  ${r.kibPerConversation === null ? '' : `${r.kibPerConversation.toFixed(1).padStart(7)} KiB/conv  `}${r.name}`;
const out = [
  `${file}: ${report.totalMiB.toFixed(1)} MiB${conv ? ` over ${conv} conversations = ${report.mibPerConversation!.toFixed(3)} MiB each` : ''}`,
  '',
  'by package of the allocating frame:',
  ...report.byPackage.map(fmt),
  '',
  'by our nearest frame:',
  ...report.byOurFrame.map(fmt),
  '',
  'by allocating function:',
  ...report.byFunction.map(fmt),
];
if (compared) {
  const change = (r: { name: string; beforeKiB: number; afterKiB: number }) =>
    `${r.beforeKiB.toFixed(1).padStart(7)} → ${r.afterKiB.toFixed(1).padStart(7)} KiB/conv  ${r.name}`;
  out.push(
    '',
    `against ${compared.against}: ${compared.mibPerConversationBefore.toFixed(3)} → ${report.mibPerConversation!.toFixed(3)} MiB per conversation`,
    'changed most, by our nearest frame:',
    ...compared.byOurFrame.map(change),
    '',
    'changed most, by allocating function:',
    ...compared.byFunction.map(change),
  );
}
process.stdout.write(out.join('\n') + '\n');
if (values.json) writeFileSync(values.json, JSON.stringify(report, null, 2));
