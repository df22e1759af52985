import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { TEST_SECRETS_KEY } from '../helpers/app.js';
import { freePort } from '../helpers/nats-server.js';
import { TEST_PG_URL } from '../helpers/postgres.js';
import { exitCodeWithin, spawnService, type ServiceProcess } from '../helpers/service-process.js';

/**
 * What an operator sees when a start cannot go on (issue 30 item 16): one line that says which
 * part failed, and an exit code other than 0. Real processes (`node src/main.ts`).
 */

/** The lines of the output that are not JSON log records (the fatal line, the printed admin key). */
const plainLines = (service: ServiceProcess) =>
  service
    .output()
    .split('\n')
    .filter((l) => l.trim() !== '' && !l.startsWith('{'));

function databaseUrl(change: (url: URL) => void): string {
  const url = new URL(TEST_PG_URL);
  change(url);
  return url.toString();
}

describe('a start that cannot go on says what failed in one line', () => {
  it('PostgreSQL not listening: "database: connect ECONNREFUSED <host>:<port>"', async (t) => {
    const closedPort = await freePort();
    const url = databaseUrl((u) => (u.port = String(closedPort)));
    const service = spawnService({ DATABASE_URL: url, SECRETS_ENCRYPTION_KEY: TEST_SECRETS_KEY, PORT: String(await freePort()) }, t);
    assert.notEqual(await exitCodeWithin(service), 0);
    assert.deepEqual(plainLines(service), [`fatal: database: connect ECONNREFUSED 127.0.0.1:${closedPort}`]);
  });

  it('a role PostgreSQL does not know: "database: role "x" does not exist"', async (t) => {
    const url = databaseUrl((u) => (u.username = 'no_such_role_h30'));
    const service = spawnService({ DATABASE_URL: url, SECRETS_ENCRYPTION_KEY: TEST_SECRETS_KEY, PORT: String(await freePort()) }, t);
    assert.notEqual(await exitCodeWithin(service), 0);
    assert.deepEqual(plainLines(service), ['fatal: database: role "no_such_role_h30" does not exist']);
  });

  it('an embedded start on a port in use stops before it creates the admin or prints a key; the next start creates it', async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'busy-port-'));
    t.after(() => rmSync(dataDir, { recursive: true, force: true }));
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    t.after(() => new Promise((resolve) => busy.close(resolve)));
    const port = (busy.address() as { port: number }).port;

    const refused = spawnService({ DATA_DIR: dataDir, PORT: String(port) }, t);
    assert.notEqual(await exitCodeWithin(refused), 0);
    assert.deepEqual(plainLines(refused), [`fatal: cannot listen on 127.0.0.1:${port}: address in use or not available`]);
    assert.ok(!existsSync(join(dataDir, 'admin-api-key')), 'no admin key file');

    // Nothing half-made: on a free port the first admin is created now, and its key printed once.
    const freeHttpPort = await freePort();
    const started = spawnService({ DATA_DIR: dataDir, PORT: String(freeHttpPort) }, t);
    await started.waitHealthy(`http://127.0.0.1:${freeHttpPort}`, 120_000);
    assert.match(started.output(), /Admin API key \(shown once\): \S+/);
    assert.ok(existsSync(join(dataDir, 'admin-api-key')));
  });
});
