import { readFileSync } from 'node:fs';

/**
 * Summarises a V8 `.cpuprofile` (from `node --cpu-prof`): self time per function and per
 * source area (this repo's folders, each node_modules package, Node internals, GC, idle).
 */

export interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface ProfileRow {
  name: string;
  selfMs: number;
  /** Share of the non-idle samples. */
  percent: number;
}

export interface ProfileSummary {
  totalMs: number;
  idleMs: number;
  byArea: ProfileRow[];
  byFunction: ProfileRow[];
  /** Inclusive (self + callees, synchronous part only) time of this repository's functions. */
  repoInclusive: ProfileRow[];
}

/**
 * `fromMs`: ignore the samples of the first milliseconds after the profile started (start-up:
 * module loading, migrations), so the summary shows the steady state under load. `clockUs`:
 * only the samples within [from, to] on the monotonic clock the profile's `startTime` is on
 * (`process.hrtime` in µs on Linux), to cut one bench bucket out of a whole run.
 */
export function summariseCpuProfile(
  source: string | CpuProfile,
  top = 25,
  window: { fromMs?: number; clockUs?: [number, number] } = {},
): ProfileSummary {
  const profile = typeof source === 'string' ? readCpuProfile(source) : source;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = selfTimes(profile, window);
  const areas = new Map<string, number>();
  const fns = new Map<string, number>();
  let idleUs = 0;
  let totalUs = 0;
  for (const [id, us] of self) {
    const node = byId.get(id)!;
    totalUs += us;
    const fn = node.callFrame.functionName || '(anonymous)';
    if (fn === '(idle)') idleUs += us;
    const area = areaOf(node.callFrame.url, fn);
    areas.set(area, (areas.get(area) ?? 0) + us);
    const key = `${fn} ${shortUrl(node.callFrame.url)}${node.callFrame.url ? ':' + (node.callFrame.lineNumber + 1) : ''}`.trim();
    fns.set(key, (fns.get(key) ?? 0) + us);
  }
  // Inclusive time: every distinct repo function on a sample's stack gets the sample's delta.
  const parent = parentsOf(profile);
  const inclusive = new Map<string, number>();
  for (const [id, us] of self) {
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const f = byId.get(cur)!.callFrame;
      if (!isRepoUrl(f.url)) continue;
      const key = `${f.functionName || '(anonymous)'} ${shortUrl(f.url)}:${f.lineNumber + 1}`;
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + us);
    }
  }
  const busyUs = totalUs - idleUs || 1;
  const rows = (m: Map<string, number>) =>
    [...m]
      .filter(([name]) => name !== '(idle)' && !name.startsWith('(idle) '))
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({ name, selfMs: Math.round(us / 1000), percent: Math.round((us / busyUs) * 1000) / 10 }));
  return {
    totalMs: Math.round(totalUs / 1000),
    idleMs: Math.round(idleUs / 1000),
    byArea: rows(areas),
    byFunction: rows(fns),
    repoInclusive: rows(inclusive),
  };
}

export function readCpuProfile(file: string): CpuProfile {
  return JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
}

/** Self time (µs) per node of the samples in the window (see summariseCpuProfile). */
export function selfTimes(
  profile: CpuProfile,
  { fromMs = 0, clockUs }: { fromMs?: number; clockUs?: [number, number] } = {},
): Map<number, number> {
  const self = new Map<number, number>();
  let t = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i] ?? 0;
    t += delta;
    if (t < fromMs * 1000) continue;
    if (clockUs && (profile.startTime + t < clockUs[0] || profile.startTime + t > clockUs[1])) continue;
    const id = profile.samples[i]!;
    self.set(id, (self.get(id) ?? 0) + delta);
  }
  return self;
}

/** Each node's caller. */
export function parentsOf(profile: CpuProfile): Map<number, number> {
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  return parent;
}

function areaOf(url: string, fn: string): string {
  if (!url) return fn.startsWith('(') ? fn : '(native)';
  if (url.startsWith('node:')) return 'node:' + url.slice(5).split('/')[0];
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 14).split('/');
    return 'npm:' + (rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]);
  }
  const m = /\/(src|schemas|actors|bench|test)\/(.*)$/.exec(url);
  if (m) {
    const parts = m[2]!.split('/');
    return `${m[1]}/${parts.length > 1 ? parts[0] + '/' : parts[0]}`;
  }
  return url;
}

function isRepoUrl(url: string): boolean {
  return url.startsWith('file://') && !url.includes('/node_modules/') && /\/(src|schemas|actors)\//.test(url);
}

function shortUrl(url: string): string {
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) return url.slice(nm + 14);
  const m = /\/((?:src|schemas|actors|bench|test)\/.*)$/.exec(url);
  return m ? m[1]! : url.replace(/^file:\/\//, '');
}

/** Plain-text table for the console. */
export function formatProfile(s: ProfileSummary, top = 15): string {
  const lines = [`busy ${s.totalMs - s.idleMs} ms of ${s.totalMs} ms sampled`, '', 'self time by area:'];
  for (const r of s.byArea.slice(0, top)) lines.push(`  ${String(r.percent).padStart(5)}%  ${String(r.selfMs).padStart(6)} ms  ${r.name}`);
  lines.push('', 'self time by function:');
  for (const r of s.byFunction.slice(0, top))
    lines.push(`  ${String(r.percent).padStart(5)}%  ${String(r.selfMs).padStart(6)} ms  ${r.name}`);
  lines.push('', 'inclusive time of repository functions (synchronous stacks only):');
  for (const r of s.repoInclusive.slice(0, top))
    lines.push(`  ${String(r.percent).padStart(5)}%  ${String(r.selfMs).padStart(6)} ms  ${r.name}`);
  return lines.join('\n');
}
