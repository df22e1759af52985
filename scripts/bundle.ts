/**
 * Bundles tsc's output (dist/src/) into dist/server/: the entry `main.js`, one entry per worker
 * thread under the file name its `new URL('./<name>.js', import.meta.url)` gives, and the modules
 * loaded later (the app, a mode's database driver, each LLM vendor's adapter) as chunks, all in
 * one flat directory. A start then loads a few dozen files instead of ~1,500 through the ESM
 * loader (docs/decisions/0091-one-bundled-file-per-entry.md). Run by scripts/build.sh after tsc.
 */
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';

const ROOT = resolve(import.meta.dirname, '..');
const OUT_DIR = join(ROOT, 'dist/server');

/** Output name → tsc's file. Worker names are the ones their pools and threads ask for. */
const ENTRIES = {
  main: 'dist/src/main.js',
  'parse-worker': 'dist/src/offthread/parse-worker.js',
  'grep-worker': 'dist/src/offthread/grep-worker.js',
  'sql-worker': 'dist/src/capabilities/sql/sql-worker.js',
  'pglite-worker': 'dist/src/db/pglite-worker.js',
};

/**
 * Left in node_modules and imported from there at run time: packages that find files next to
 * their own code (uWebSockets.js's native addon, PGlite's and sql.js's WASM, piscina's worker
 * script) and the LLM vendors' SDKs, which a provider imports at its first call and which would
 * otherwise only add to the build. pino is bundled: only its transports find files that way, and
 * the service logs to stdout without one (src/log.ts).
 */
const EXTERNAL = [
  'uWebSockets.js',
  '@electric-sql/pglite',
  '@electric-sql/pglite-socket',
  'sql.js',
  'piscina',
  'openai',
  '@anthropic-ai/sdk',
  '@google/genai',
  // pg's optional native binding, required in a try/catch.
  'pg-native',
];

rmSync(OUT_DIR, { recursive: true, force: true });
const common = {
  absWorkingDir: ROOT,
  outdir: OUT_DIR,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node22',
  external: EXTERNAL,
  // CommonJS dependencies bundled into ES modules still call `require` for Node's built-ins
  // and the external packages.
  banner: { js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);" },
  sourcemap: 'linked',
  legalComments: 'linked',
  logLevel: 'warning',
} as const;
const entry = (name: keyof typeof ENTRIES) => ({ [name]: join(ROOT, ENTRIES[name]) });
// The service with code splitting: what it imports dynamically (the app, a mode's driver, each
// LLM vendor's adapter) becomes chunks loaded when imported. Flat: the chunks sit beside the
// worker files that `new URL('./x.js', import.meta.url)` names, one level below dist/ like tsc's
// src/ (src/package-root.ts).
await build({ ...common, entryPoints: entry('main'), splitting: true, chunkNames: '[name]-[hash]' });
// Each worker in one file of its own: a thread loads one module, and sharing chunks with the
// service would cut the service's graph into more chunks (more files to resolve at its start).
await Promise.all(
  (['parse-worker', 'grep-worker', 'sql-worker', 'pglite-worker'] as const).map((name) => build({ ...common, entryPoints: entry(name) })),
);
checkWorkerFiles();

/** Every worker file a bundled module asks for by URL exists: a renamed worker fails the build, not a request. */
function checkWorkerFiles(): void {
  const files = new Set(readdirSync(OUT_DIR));
  const missing: string[] = [];
  for (const file of files) {
    if (!file.endsWith('.js')) continue;
    for (const m of readFileSync(join(OUT_DIR, file), 'utf8').matchAll(/new URL\("\.\/([^"]+)", import\.meta\.url\)/g))
      if (!files.has(m[1]!)) missing.push(`${file} → ${m[1]}`);
  }
  if (missing.length) throw new Error(`bundle: worker files missing from dist/server: ${missing.join(', ')}`);
}
