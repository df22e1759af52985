/**
 * Breaks down a heap profile written by bench/real-path/alloc-sampler.ts (run the service with
 * `--from-source` so frames name src/ files): bytes by package of the allocating frame, by our
 * nearest frame (the innermost src/ function on the stack: what of ours allocated or called the
 * library that did), and the top allocating functions. With the sampler's `.json` beside the
 * profile, every figure is also given in KiB per conversation.
 *
 *   node --import tsx bench/real-path/alloc-report.ts /tmp/alloc.heapprofile [--top 25] [--json out.json]
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  callFrame: CallFrame;
  selfSize: number;
  children: ProfileNode[];
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '25' }, json: { type: 'string' } },
});
const file = positionals[0];
if (!file) throw new Error('usage: alloc-report.ts <file.heapprofile> [--top N] [--json out.json]');
const top = Number(values.top);
const head = (JSON.parse(readFileSync(file, 'utf8')) as { head: ProfileNode }).head;
const meta = existsSync(`${file}.json`)
  ? (JSON.parse(readFileSync(`${file}.json`, 'utf8')) as { conversations: number | null; seconds: number })
  : null;

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

const byPackage = new Map<string, number>();
const byOurFrame = new Map<string, number>();
const byFunction = new Map<string, number>();
const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);

function walk(n: ProfileNode, ours: string): void {
  const here = isOurs(n.callFrame) ? where(n.callFrame) : ours;
  if (n.selfSize > 0) {
    add(byPackage, packageOf(n.callFrame.url), n.selfSize);
    add(byOurFrame, here, n.selfSize);
    add(byFunction, where(n.callFrame), n.selfSize);
  }
  for (const c of n.children) walk(c, here);
}
walk(head, '(no frame of ours)');

const total = [...byPackage.values()].reduce((s, b) => s + b, 0);
const conv = meta?.conversations ?? null;
const rows = (m: Map<string, number>, n: number) =>
  [...m]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([name, bytes]) => ({ name, bytes, share: bytes / total, kibPerConversation: conv ? bytes / 1024 / conv : null }));
const report = {
  file,
  totalMiB: total / 1048576,
  conversations: conv,
  mibPerConversation: conv ? total / 1048576 / conv : null,
  byPackage: rows(byPackage, top),
  byOurFrame: rows(byOurFrame, top),
  byFunction: rows(byFunction, top),
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
process.stdout.write(out.join('\n') + '\n');
if (values.json) writeFileSync(values.json, JSON.stringify(report, null, 2));
