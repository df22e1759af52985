/**
 * In-memory implementations of the capability storage ports (src/capabilities/storage-ports.ts)
 * for tests. They follow the ports' documented contract, errors included, so tool tests assert
 * real behaviour and other suites can reuse them. SQL runs on the real sqlite engine.
 */
import { ConflictError, NotFoundError, UnprocessableError } from '../../src/errors.js';
import { compileLinearRegex } from '../../src/patterns/index.js';
import type { Capability, ToolContext, ToolDefinition, ToolResult } from '../../src/capabilities/types.js';
import type {
  CreateScheduleInput,
  FileStat,
  GrepOptions,
  GrepResult,
  KvEntry,
  ScheduleInfo,
  SecretInfo,
  SessionFs,
  SessionKv,
  SessionSchedules,
  SessionSecrets,
  SessionSql,
  SqlDatabaseInfo,
} from '../../src/capabilities/storage-ports.js';
import { openDatabase } from '../../src/capabilities/sql/sqlite-engine.js';

/** The fixed "now" of fake contexts. */
export const FAKE_NOW = new Date('2026-04-01T12:00:00.000Z');

type Clock = () => Date;
interface Node {
  content: Uint8Array | null;
  is_readonly: boolean;
  created_at: string;
  updated_at: string;
}

export type FakeFs = ReturnType<typeof createFakeFs>;

/** A virtual file system; `seed` adds files (optionally read-only) without the port's checks. */
export function createFakeFs(now: Clock = () => FAKE_NOW) {
  const nodes = new Map<string, Node>();
  const ts = () => now().toISOString();
  const parentOf = (p: string) => (p.lastIndexOf('/') <= 0 ? '/' : p.slice(0, p.lastIndexOf('/')));
  const isDir = (p: string) => p === '/' || nodes.get(p)?.content === null;
  const statOf = (p: string): FileStat | null => {
    if (p === '/')
      return { path: '/', name: '', is_directory: true, is_readonly: false, size_bytes: 0, created_at: ts(), updated_at: ts() };
    const n = nodes.get(p);
    if (!n) return null;
    const name = p.slice(p.lastIndexOf('/') + 1);
    return {
      path: p,
      name,
      is_directory: n.content === null,
      is_readonly: n.is_readonly,
      size_bytes: n.content?.length ?? 0,
      created_at: n.created_at,
      updated_at: n.updated_at,
    };
  };
  const under = (dir: string) => [...nodes.keys()].filter((p) => p.startsWith(dir === '/' ? '/' : dir + '/') && p !== dir).sort();
  const ensureParents = (p: string) => {
    for (let dir = parentOf(p); dir !== '/'; dir = parentOf(dir)) {
      const n = nodes.get(dir);
      if (n && n.content !== null) throw new ConflictError(`${dir} is a file`);
      if (!n) nodes.set(dir, { content: null, is_readonly: false, created_at: ts(), updated_at: ts() });
    }
  };
  const transfer = (src: string, dst: string, overwrite: boolean | undefined, keep: boolean): FileStat => {
    if (!nodes.has(src)) throw new NotFoundError(`No such file or directory: ${src}`);
    const existing = nodes.get(dst);
    if (existing && !overwrite) throw new ConflictError(`Destination exists: ${dst}`);
    if (existing?.is_readonly) throw new ConflictError(`${dst} is read-only`);
    if (!keep && nodes.get(src)!.is_readonly) throw new ConflictError(`${src} is read-only`);
    ensureParents(dst);
    for (const p of [src, ...under(src)]) {
      const n = nodes.get(p)!;
      nodes.set(dst + p.slice(src.length), { ...n, is_readonly: keep ? false : n.is_readonly, updated_at: ts() });
      if (!keep) nodes.delete(p);
    }
    return statOf(dst)!;
  };

  const fs: SessionFs = {
    async stat(path) {
      return statOf(path);
    },
    async read(path) {
      const n = nodes.get(path);
      if (!n) throw new NotFoundError(`File not found: ${path}`);
      if (n.content === null) throw new UnprocessableError(`${path} is a directory`);
      return { stat: statOf(path)!, content: n.content };
    },
    async write(path, content) {
      const n = nodes.get(path);
      if (n?.content === null) throw new ConflictError(`${path} is a directory`);
      if (n?.is_readonly) throw new ConflictError(`${path} is read-only`);
      ensureParents(path);
      nodes.set(path, { content: new Uint8Array(content), is_readonly: false, created_at: n?.created_at ?? ts(), updated_at: ts() });
      return { stat: statOf(path)!, created: !n };
    },
    async list(path, opts) {
      if (!isDir(path))
        throw nodes.has(path) ? new UnprocessableError(`${path} is not a directory`) : new NotFoundError(`No such directory: ${path}`);
      const all = under(path);
      return (opts?.recursive ? all : all.filter((p) => parentOf(p) === path)).map((p) => statOf(p)!);
    },
    async delete(path, opts) {
      const n = nodes.get(path);
      if (!n) throw new NotFoundError(`No such file or directory: ${path}`);
      if (n.is_readonly) throw new ConflictError(`${path} is read-only`);
      const children = under(path);
      if (children.length > 0 && !opts?.recursive) throw new ConflictError(`Directory not empty: ${path}`);
      for (const p of [path, ...children]) nodes.delete(p);
    },
    async move(src, dst, opts) {
      return transfer(src, dst, opts?.overwrite, false);
    },
    async copy(src, dst, opts) {
      return transfer(src, dst, opts?.overwrite, true);
    },
    async grep(pattern, opts: GrepOptions = {}) {
      const re = compileLinearRegex(pattern, { ignoreCase: opts.ignore_case === true });
      const glob = opts.path_pattern ? globToRegExp(opts.path_pattern) : null;
      const results: GrepResult[] = [];
      let left = opts.max_matches ?? Infinity;
      for (const p of under(opts.path ?? '/')) {
        const content = nodes.get(p)!.content;
        if (content === null || left <= 0 || (glob && !glob.test(p))) continue;
        const lines = new TextDecoder().decode(content).split('\n');
        const matches = lines.flatMap((line, i) => (re.test(line) ? [{ path: p, line_number: i + 1, line }] : [])).slice(0, left);
        left -= matches.length;
        if (matches.length > 0) results.push({ path: p, matches });
      }
      return results;
    },
  };
  const seed = (path: string, text: string, opts: { readonly?: boolean } = {}) => {
    ensureParents(path);
    nodes.set(path, { content: new TextEncoder().encode(text), is_readonly: opts.readonly === true, created_at: ts(), updated_at: ts() });
  };
  const text = (path: string) => {
    const c = nodes.get(path)?.content;
    return c ? new TextDecoder().decode(c) : undefined;
  };
  return Object.assign(fs, { seed, text, paths: () => [...nodes.keys()].sort() });
}

/** `*` within a segment, `**` across segments; a pattern without `/` matches the file name anywhere. */
export function globToRegExp(glob: string): RegExp {
  const body = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*\*\/?|\*|\?/g, (m) => (m.startsWith('**') ? '(?:.*/)?' : m === '*' ? '[^/]*' : '[^/]'));
  return new RegExp(glob.includes('/') ? `^/?${body}$` : `(?:^|/)${body}$`);
}

export function createFakeKv(now: Clock = () => FAKE_NOW): SessionKv & { entries: Map<string, KvEntry> } {
  const entries = new Map<string, KvEntry>();
  return {
    entries,
    async get(key) {
      return entries.get(key)?.value ?? null;
    },
    async set(key, value) {
      const t = now().toISOString();
      entries.set(key, { key, value, created_at: entries.get(key)?.created_at ?? t, updated_at: t });
    },
    async delete(key) {
      return entries.delete(key);
    },
    async list({ prefix = '', limit = 100, offset = 0, include_values = false } = {}) {
      const all = [...entries.values()].filter((e) => e.key.startsWith(prefix)).sort((a, b) => a.key.localeCompare(b.key));
      const page = all.slice(offset, offset + limit).map(({ value, ...rest }) => (include_values ? { ...rest, value } : rest));
      return { entries: page, total: all.length };
    },
  };
}

export function createFakeSecrets(now: Clock = () => FAKE_NOW): SessionSecrets & { values: Map<string, string> } {
  const values = new Map<string, string>();
  const info = new Map<string, SecretInfo>();
  return {
    values,
    async get(name) {
      const value = values.get(name);
      return value === undefined ? null : { value, allowed_hosts: info.get(name)!.allowed_hosts };
    },
    async set(name, { value, allowed_hosts }) {
      const t = now().toISOString();
      const before = info.get(name);
      values.set(name, value);
      info.set(name, {
        name,
        allowed_hosts: allowed_hosts ? [...allowed_hosts] : (before?.allowed_hosts ?? []),
        created_at: before?.created_at ?? t,
        updated_at: t,
      });
    },
    async delete(name) {
      info.delete(name);
      return values.delete(name);
    },
    async list() {
      return [...info.values()].sort((a, b) => a.name.localeCompare(b.name));
    },
    async allValues() {
      return [...values].map(([name, value]) => ({ name, value }));
    },
  };
}

/** Named databases as bytes, each call on a fresh engine instance (as the storage layer will do). */
export function createFakeSql(now: Clock = () => FAKE_NOW): SessionSql & { bytes: Map<string, Uint8Array> } {
  const bytes = new Map<string, Uint8Array>();
  const info = new Map<string, SqlDatabaseInfo>();
  return {
    bytes,
    async list() {
      return [...info.values()].sort((a, b) => a.name.localeCompare(b.name));
    },
    async open(name, opts) {
      if (!bytes.has(name) && !opts?.create) throw new NotFoundError(`Database not found: ${name}`);
      const db = await openDatabase(bytes.get(name) ?? null);
      const save = () => {
        const data = db.export();
        const t = now().toISOString();
        bytes.set(name, data);
        info.set(name, { name, size_bytes: data.length, created_at: info.get(name)?.created_at ?? t, updated_at: t });
      };
      if (!bytes.has(name)) save();
      return {
        async exec(sql, params) {
          const result = db.exec(sql, params);
          save();
          return result;
        },
        async query(sql, params, o) {
          return db.query(sql, params, o);
        },
        async schema() {
          return db.schema();
        },
        async close() {
          db.close();
        },
      };
    },
  };
}

export function createFakeSchedules(now: Clock = () => FAKE_NOW): SessionSchedules & { all: ScheduleInfo[] } {
  const all: ScheduleInfo[] = [];
  let next = 1;
  return {
    all,
    async create(input: CreateScheduleInput) {
      if (all.filter((s) => s.status === 'active').length >= input.max_active) throw new ConflictError('Too many active schedules');
      const { max_active: _max, ...fields } = input;
      const s: ScheduleInfo = { ...fields, id: `sch_${next++}`, status: 'active', last_run_at: null, created_at: now().toISOString() };
      all.push(s);
      return s;
    },
    async cancel(id) {
      const s = all.find((x) => x.id === id);
      if (!s) throw new NotFoundError(`Schedule not found: ${id}`);
      if (s.status !== 'active') throw new ConflictError(`Schedule ${id} is not active`);
      s.status = 'cancelled';
      s.next_run_at = null;
      return s;
    },
    async list(opts) {
      return all.filter((s) => opts?.include_inactive || s.status === 'active');
    },
  };
}

export interface FakeToolContext extends ToolContext {
  fs: FakeFs;
  kv: ReturnType<typeof createFakeKv>;
  secrets: ReturnType<typeof createFakeSecrets>;
  sql: ReturnType<typeof createFakeSql>;
  schedules: ReturnType<typeof createFakeSchedules>;
  abort: AbortController;
}

/** A tool context over fresh fakes, a fixed clock and an abort controller. */
export function createFakeToolContext(overrides: Partial<ToolContext> = {}): FakeToolContext {
  const now = overrides.now ?? (() => FAKE_NOW);
  const abort = new AbortController();
  return {
    session_id: 'ses_test',
    org_id: 'org_test',
    config: {},
    signal: abort.signal,
    now,
    fs: createFakeFs(now),
    kv: createFakeKv(now),
    secrets: createFakeSecrets(now),
    sql: createFakeSql(now),
    schedules: createFakeSchedules(now),
    abort,
    ...overrides,
  } as FakeToolContext;
}

/** The named tool of a capability; throws when absent. */
export function toolOf(capability: Capability, name: string): ToolDefinition {
  const tool = capability.tools.find((t) => t.name === name);
  if (!tool) throw new Error(`${capability.id} has no tool ${name}`);
  return tool;
}

/** The first text part parsed as JSON. */
export function jsonOf<T = Record<string, unknown>>(result: ToolResult): T {
  return JSON.parse(result.content[0]!.text) as T;
}
