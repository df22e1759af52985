import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { promisify } from 'node:util';
import { TEST_SECRETS_KEY } from './helpers/app.js';
import { freePort, natsServiceEnv, startNatsServer } from './helpers/nats-server.js';
import { createTestDatabase } from './helpers/postgres.js';
import { BUILT_ENTRY, ensureBuilt, ROOT, START_NODE_FLAGS } from './helpers/service-process.js';

/**
 * Start-up (issue 13 item 7), through what `npm start` runs (the bundle of src/main.ts that
 * scripts/build.sh makes): the phase log an operator reads, and Node's compile cache that spares
 * a restart compiling the bundle's modules again. Durations are not asserted (they depend on the
 * machine), only that they are reported.
 */

before(() => ensureBuilt());

interface Started {
  lines: Record<string, unknown>[];
  stderr: string;
}

/** Starts the built service, waits for /health 200 and the `start-up complete` line, stops it with SIGTERM. */
async function startAndStop(env: Record<string, string>): Promise<Started> {
  const port = await freePort();
  const child = spawn(process.execPath, [...START_NODE_FLAGS, BUILT_ENTRY], {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    const deadline = Date.now() + 120_000;
    for (;;) {
      assert.equal(child.exitCode, null, `main exited:\n${stdout}${stderr}`);
      assert.ok(Date.now() < deadline, `no start within 120 s:\n${stdout}${stderr}`);
      const healthy = await fetch(`http://127.0.0.1:${port}/health`)
        .then((r) => r.status === 200)
        .catch(() => false);
      if (healthy && stdout.includes('"start-up complete"')) break;
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
  const lines = stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { lines, stderr };
}

test('a start logs every phase with its duration and a summary; the compile cache written by the first start is used by the second', async (t) => {
  const db = await createTestDatabase('startup');
  t.after(() => db.drop());
  const nats = await startNatsServer({ t });
  // The compile cache defaults to $TMPDIR/node-compile-cache: a fresh TMPDIR shows what this start wrote.
  const tmp = mkdtempSync(join(tmpdir(), 'ass-startup-'));
  t.after(() => rmSync(tmp, { recursive: true, force: true }));
  const env = {
    TMPDIR: tmp,
    DATABASE_URL: db.url,
    SECRETS_ENCRYPTION_KEY: TEST_SECRETS_KEY,
    ...natsServiceEnv(nats),
    // Node's own report of each module's cache entry (read below for the second start).
    NODE_DEBUG_NATIVE: 'COMPILE_CACHE',
  };

  const first = await startAndStop(env);
  const phases = first.lines.filter((l) => l['msg'] === 'start-up phase');
  const names = phases.map((l) => l['phase']);
  for (const name of [
    'node',
    'config',
    'modules',
    'keyring',
    'nats.connect',
    'nats.streams',
    'database.connect',
    'database.migrations',
    'auth',
    'validators',
    'listen',
  ]) {
    assert.ok(names.includes(name), `no phase ${name} in ${names.join(', ')}`);
  }
  for (const p of phases)
    assert.ok(Number.isInteger(p['ms']) && (p['ms'] as number) >= 0, `phase ${String(p['phase'])}: ms ${String(p['ms'])}`);
  // Phases that ran before the logger existed come first, in the order they ran.
  assert.deepEqual(names.slice(0, 3), ['node', 'config', 'modules']);
  const listening = first.lines.find((l) => l['msg'] === 'agent session service listening');
  assert.ok(Number.isInteger(listening?.['since_process_start_ms']));
  const summary = first.lines.find((l) => l['msg'] === 'start-up complete');
  assert.ok(summary, 'no start-up complete line');
  assert.ok((summary['since_process_start_ms'] as number) >= (listening!['since_process_start_ms'] as number));
  assert.deepEqual(Object.keys(summary['phases'] as object), names);

  const cacheDir = join(tmp, 'node-compile-cache');
  const cached = readdirSync(cacheDir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
  // The bundle's entry, its chunks and the packages left outside it.
  assert.ok(cached.length > 10, `${cached.length} files in ${cacheDir}`);
  const second = await startAndStop(env);
  assert.match(second.stderr, /cache for file:\/\/\S+\/dist\/server\/config-\w+\.js was accepted/);
  assert.match(second.stderr, /cache for file:\/\/\S+\/dist\/server\/app-\w+\.js was accepted/);
});

test('loading the app loads none of undici, the HTML parsers, piscina and sql.js: none is needed before listening', async () => {
  // A process of its own: this one has loaded both long ago.
  const script = `
    import { createRequire } from 'node:module';
    await import('./src/app.ts');
    const cached = Object.keys(createRequire(import.meta.url).cache);
    console.log(JSON.stringify({
      undici: process.moduleLoadList.filter((m) => m.includes('undici')),
      html: cached.filter((k) => /node-html-(markdown|parser)/.test(k)),
      pools: cached.filter((k) => /node_modules[/](piscina|sql[.]js)[/]/.test(k)),
    }));`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT });
  const loaded = JSON.parse(stdout.trim().split('\n').at(-1)!) as { undici: string[]; html: string[]; pools: string[] };
  // An ES import of node:http reads its lazy WebSocket getters, which load undici (pinned-request.ts).
  assert.deepEqual(loaded.undici, []);
  // The parse pool's workers convert HTML; the service's thread never does (html-conversion.ts).
  assert.deepEqual(loaded.html, []);
  // The worker pools load piscina with their first job; sql.js is the SQL workers' alone.
  assert.deepEqual(loaded.pools, []);
});
