import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { createSession, listAll, runTools } from './api/fs/helpers.js';
import { TEST_ADMIN_KEY, TEST_SECRETS_KEY, type ServiceEndpoint } from './helpers/app.js';
import { request } from './helpers/http.js';
import { freePort, natsServiceEnv, startNatsServer } from './helpers/nats-server.js';
import { createTestDatabase } from './helpers/postgres.js';
import { BUILT_ENTRY, ensureBuilt, ROOT, spawnService } from './helpers/service-process.js';

/**
 * The artefact a deployment runs (issue 13 item 7): the bundle in dist/server/ that
 * scripts/build.sh makes and `npm start` starts. The rest of the suite runs src/ through tsx,
 * so this is where a bundle that lost a worker file, an asset or a lazily imported chunk shows:
 * each feature below loads something by path at run time (the parse and SQL worker pools, the
 * PGlite thread, the example agents, the console's files, an LLM provider's module).
 */

const BASE_ENV = { BOOTSTRAP_ADMIN_API_KEY: TEST_ADMIN_KEY, HOST: '127.0.0.1', WEB_FETCH_ALLOWED_PRIVATE_HOSTS: '127.0.0.1' };

before(() => ensureBuilt());

/** Starts the bundle with `env`, waits for /health 200 and returns the endpoint the request helpers take. */
async function startBuilt(t: { after(fn: () => unknown): void }, env: Record<string, string>): Promise<ServiceEndpoint> {
  const port = await freePort();
  const service = spawnService({ ...BASE_ENV, ...env, PORT: String(port) }, t, BUILT_ENTRY);
  const url = `http://127.0.0.1:${port}`;
  await service.waitHealthy(url, 120_000);
  return { url, adminKey: TEST_ADMIN_KEY, request: (method, path, ro = {}) => request(url, method, path, { key: TEST_ADMIN_KEY, ...ro }) };
}

/** A page for `fetch_url`: its HTML goes through the parse pool's workers to Markdown. */
async function startHtmlServer(t: { after(fn: () => unknown): void }): Promise<string> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body><h1>Bundled</h1><p>converted off-thread</p></body></html>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise((resolve) => server.close(resolve)));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/page`;
}

/** One turn of llmsim's plain reply: the model path, from the message to `session.idled`. */
async function runPlainTurn(app: ServiceEndpoint): Promise<void> {
  const sessionId = await createSession(app, []);
  const sent = await app.request('POST', `/v1/sessions/${sessionId}/messages`, {
    body: { message: { content: [{ type: 'text', text: 'hello from the bundle' }] } },
  });
  assert.equal(sent.status, 201, sent.text);
  const deadline = Date.now() + 30_000;
  for (;;) {
    const types = (await listAll(app, sessionId)).map((e) => e.type as string);
    if (types.includes('session.idled')) {
      assert.ok(types.includes('output.message.completed'), types.join(', '));
      return;
    }
    assert.ok(Date.now() < deadline, `no session.idled within 30 s: ${types.join(', ')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('the shipped bundle (dist/server/main.js)', () => {
  test('is what a start runs: a few dozen files, every worker thread an entry of its own', () => {
    const files = readdirSync(join(ROOT, 'dist/server')).filter((f) => f.endsWith('.js'));
    for (const worker of ['main.js', 'parse-worker.js', 'grep-worker.js', 'sql-worker.js', 'pglite-worker.js'])
      assert.ok(files.includes(worker), worker);
    assert.ok(files.length < 100, `${files.length} files`);
  });

  test('distributed mode: serves /health, runs a turn, and its worker pools (SQL, grep, parsers) and assets load from the bundle', async (t) => {
    const db = await createTestDatabase('bundle');
    t.after(() => db.drop());
    const nats = await startNatsServer({ t });
    const app = await startBuilt(t, { DATABASE_URL: db.url, SECRETS_ENCRYPTION_KEY: TEST_SECRETS_KEY, ...natsServiceEnv(nats) });

    await runPlainTurn(app);
    // The SQL sandbox's piscina pool (dist/server/sql-worker.js) and sql.js's WASM.
    const sqlSession = await createSession(app, ['session_sql_database']);
    const [created] = await runTools(app, sqlSession, [['sql_execute', { database: 'main', sql: 'CREATE TABLE t (x INTEGER)' }]]);
    assert.equal(created!.success, true, created!.error);
    // The grep pool (dist/server/grep-worker.js): a file search and its glob.
    const fsSession = await createSession(app, ['session_file_system']);
    const [written] = await runTools(app, fsSession, [['write_file', { path: '/notes/a.md', content: 'one\nneedle two\n' }]]);
    assert.equal(written!.success, true, written!.error);
    const [found] = await runTools(app, fsSession, [['grep_files', { pattern: 'needle', path_pattern: '*.md' }]]);
    assert.equal(found!.success, true, found!.error);
    assert.equal(found!.result.results[0].matches[0].line_number, 2);
    // The parse pool (dist/server/parse-worker.js): fetched HTML to Markdown, and an agent definition.
    const page = await startHtmlServer(t);
    const webSession = await createSession(app, ['web_fetch']);
    const [fetched] = await runTools(app, webSession, [['fetch_url', { url: page }]]);
    assert.equal(fetched!.success, true, fetched!.error);
    const completed = (await listAll(app, webSession)).find((e) => e.type === 'tool.completed');
    assert.match(JSON.stringify(completed.data.result), /# Bundled/);
    const imported = await app.request('POST', '/v1/agents/import', {
      raw: 'name: from-the-bundle\nsystem_prompt: hi\n',
      headers: { 'content-type': 'application/yaml' },
    });
    assert.equal(imported.status, 201, imported.text);
    // Files read relative to the code: the example agents, the console, package.json (the version).
    const example = await app.request('GET', '/v1/agent-examples');
    assert.equal(example.status, 200, example.text);
    assert.ok((example.body.data as unknown[]).length > 0);
    const console = await fetch(`${app.url}/console/`);
    assert.equal(console.status, 200);
    assert.match(await console.text(), /<html/i);
    const vendor = await fetch(`${app.url}/console/vendor/preact-htm.js`);
    assert.equal(vendor.status, 200);
    await vendor.arrayBuffer();
  });

  test('embedded mode: PGlite starts on its thread (dist/server/pglite-worker.js) and a turn runs', async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'ass-bundle-'));
    t.after(() => rmSync(dataDir, { recursive: true, force: true }));
    const app = await startBuilt(t, { DATA_DIR: dataDir });
    await runPlainTurn(app);
  });
});
