/**
 * No dead paths in the docs: every repository path a Markdown doc names (in backticks, in a
 * link, in a code block or in running text) must exist; a glob must match at least one file.
 * Fast and service-free: it reads files and the working tree only.
 */
import assert from 'node:assert/strict';
import { existsSync, globSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The docs whose paths are checked. */
const DOC_GLOBS = [
  'README.md',
  'docs/**/*.md',
  'bench/README.md',
  'bench/results/README.md',
  'bench/results/notes-*.md',
  'deploy/**/README.md',
];

/** Top-level folders a path in running text may start with. */
const TOP_FOLDERS = ['src', 'test', 'bench', 'docs', 'scripts', 'deploy', 'schemas', 'console', 'packages', 'actors', 'examples'];

/** Root files a doc may name without a folder. */
const ROOT_FILE =
  /^(?:README\.md|package(?:-lock)?\.json|tsconfig(?:\.[\w-]+)?\.json|biome\.json|redocly\.yaml|\.dependency-cruiser\.cjs|\.gitignore)$/;

/** A file a benchmark wrote into bench/results. */
const RESULT_FILE = /^(?:chaos|http|real-path|sse-fanout|startup|turns)-20\d\d-[\w.-]+\.(?:json|md)$/;

/** Paths a doc names although the repository does not hold them: made at run time or by the operator (git-ignored). */
const NOT_IN_REPO = new Set(['deploy/.env', 'deploy/certs/', 'bench/.cache/langgraph', 'bench/.cache/mastra']);

/** A path: a top-level folder, then path characters, `{a,b}` lists and `<placeholder>`s. */
const pathInText = new RegExp(`(?<![\\w./@<-])(?:${TOP_FOLDERS.join('|')})/(?:[\\w.*/-]|\\{[\\w.,/-]*\\}|<[\\w -]*>|\\[[\\w-]*\\])*`, 'g');

/** Trims what a sentence adds after a path (a full stop, a comma, a closing bracket, `'s`). */
function trimPath(raw: string): string {
  return raw.replace(/'s$/, '').replace(/[.,:;)]+$/, '');
}

/** `<date>` and optional `[-label]` parts match anything. */
function placeholdersToGlob(path: string): string {
  return path.replace(/<[^>]*>/g, '*').replace(/\[[^\]]*\]/g, '*');
}

/** `a/{b,c}.ts` → `a/b.ts`, `a/c.ts` (one level of braces, as the docs write them). */
function expandBraces(path: string): string[] {
  const match = /\{([^}]*)\}/.exec(path);
  if (!match) return [path];
  const [before, after] = [path.slice(0, match.index), path.slice(match.index + match[0].length)];
  return (match[1] ?? '').split(',').flatMap((part) => expandBraces(`${before}${part}${after}`));
}

/** Every repository path a Markdown text names, relative to the repository root. */
export function namedPaths(markdown: string, docDir: string): string[] {
  const found = new Set<string>();
  for (const match of markdown.matchAll(pathInText)) {
    found.add(placeholdersToGlob(trimPath(match[0])));
  }
  for (const match of markdown.matchAll(/`([^`\s]+)`/g)) {
    const span = match[1] ?? '';
    if (ROOT_FILE.test(span)) found.add(span);
    // A benchmark result named without its folder (`real-path-2026-11-28T06-51-17-080Z-final-morning.json`).
    if (RESULT_FILE.test(span)) found.add(`bench/results/${span}`);
  }
  for (const match of markdown.matchAll(/\]\(([^)\s#]+)(?:#[^)]*)?\)/g)) {
    const target = match[1] ?? '';
    if (/^[a-z]+:/i.test(target)) continue;
    const path = relative(root, normalize(join(root, docDir, target)));
    if (!path.startsWith('..')) found.add(path);
  }
  return [...found];
}

/** A test file may be named without `.test.ts`, a module without `.ts`. */
function existsOne(path: string): boolean {
  if (NOT_IN_REPO.has(path)) return true;
  const candidates = [path, `${path}.ts`, `${path}.test.ts`];
  if (path.includes('*')) return candidates.some((c) => globSync(c, { cwd: root }).length > 0);
  return candidates.some((c) => existsSync(join(root, c)));
}

function exists(path: string): boolean {
  return expandBraces(path).every(existsOne);
}

function docs(): string[] {
  return DOC_GLOBS.flatMap((pattern) => globSync(pattern, { cwd: root })).sort();
}

test('the path extractor finds backticked, linked and plain paths', () => {
  const text =
    'See `src/http/route.ts`, [the index](decisions/README.md) and src/turns/*.ts. Also `package.json`, ' +
    "src/bus/nats's tails, test/api/{agents,sessions}, bench/results/chaos-<date>[-label].json, " +
    'the run `turns-2026-11-21T21-40-17-174Z.json`, https://example.com/src/x.ts and `DATA_DIR/pglite` (not repository paths).';
  assert.deepEqual(namedPaths(text, 'docs').sort(), [
    'bench/results/chaos-**.json',
    'bench/results/turns-2026-11-21T21-40-17-174Z.json',
    'docs/decisions/README.md',
    'package.json',
    'src/bus/nats',
    'src/http/route.ts',
    'src/turns/*.ts',
    'test/api/{agents,sessions}',
  ]);
  assert.deepEqual(expandBraces('test/{a,b}/x'), ['test/a/x', 'test/b/x']);
});

test('every path a doc names exists', () => {
  const files = docs();
  assert.ok(files.includes('README.md') && files.some((f) => f.startsWith('docs/decisions/')));
  const dead: string[] = [];
  for (const file of files) {
    const text = readFileSync(join(root, file), 'utf8');
    for (const path of namedPaths(text, dirname(file))) {
      if (!exists(path)) dead.push(`${file}: ${path}`);
    }
  }
  assert.deepEqual(dead, [], `dead paths in the docs:\n${dead.join('\n')}`);
});

test("README's layout names every folder of src/ and every top-level folder", () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const layout = /## Layout\n\n```\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
  const listed = new Set(layout.split('\n').flatMap((line) => line.split(/\s{2,}/)[0]?.split(/,\s*/) ?? []));
  const folders = (dir: string) =>
    readdirSync(join(root, dir), { withFileTypes: true })
      .filter((e) => e.isDirectory() && !e.name.startsWith('.') && e.name !== 'node_modules' && e.name !== 'data')
      .map((e) => `${dir ? `${dir}/` : ''}${e.name}/`);
  const expected = [...folders('src'), ...folders('').filter((f) => f !== 'src/')];
  const missing = expected.filter((f) => !listed.has(f) && ![...listed].some((l) => l.startsWith(f)));
  assert.deepEqual(missing, [], `folders the README layout does not list: ${missing.join(', ')}`);
});
