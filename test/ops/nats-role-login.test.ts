import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { TEST_ADMIN_KEY, TEST_SECRETS_KEY } from '../helpers/app.js';
import { freePort, startNatsServer, type NatsServer } from '../helpers/nats-server.js';
import { createTestDatabase } from '../helpers/postgres.js';
import { exitCodeWithin, ROOT, spawnService } from '../helpers/service-process.js';

/**
 * A NATS login of the wrong role (issue 30 item 15): `ROLE=all` logged in as `worker` used to start
 * and answer /health 200 while SSE clients looped `connected`/`disconnecting` (no `live.>`) and
 * deletions failed (no purge). The start now tries each permission its role needs and stops with
 * one line naming the refused ones. Real processes against a nats-server with deploy/nats/auth.conf.
 */

const AUTH_CONF = readFileSync(`${ROOT}/deploy/nats/auth.conf`, 'utf8');
const passwords = {
  api: `pw${randomBytes(12).toString('hex')}`,
  worker: `pw${randomBytes(12).toString('hex')}`,
  service: `pw${randomBytes(12).toString('hex')}`,
};

describe('the start checks that its NATS login holds what its ROLE needs', () => {
  let nats: NatsServer;
  let databaseUrl: string;
  let dropDatabase: () => Promise<void>;
  before(async () => {
    nats = await startNatsServer({
      secure: false,
      files: { 'auth.conf': AUTH_CONF },
      config: 'include ./auth.conf',
      env: { NATS_API_PASSWORD: passwords.api, NATS_WORKER_PASSWORD: passwords.worker, NATS_SERVICE_PASSWORD: passwords.service },
    });
    const db = await createTestDatabase('role_login');
    databaseUrl = db.url;
    dropDatabase = () => db.drop();
  });
  after(async () => {
    await nats?.stop();
    await dropDatabase?.();
  });

  async function start(t: { after(fn: () => unknown): void }, role: string, user: keyof typeof passwords) {
    const port = await freePort();
    const service = spawnService(
      {
        ROLE: role,
        NATS_URL: `nats://${user}:${passwords[user]}@127.0.0.1:${nats.port}`,
        DATABASE_URL: databaseUrl,
        SECRETS_ENCRYPTION_KEY: TEST_SECRETS_KEY,
        BOOTSTRAP_ADMIN_API_KEY: TEST_ADMIN_KEY,
        PORT: String(port),
      },
      t,
    );
    return { service, url: `http://127.0.0.1:${port}` };
  }

  /** The lines of the output that are not JSON log records. */
  const plainLines = (out: string) => out.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('{'));

  it('ROLE=all logged in as worker exits with one line naming the missing permissions', async (t) => {
    const { service } = await start(t, 'all', 'worker');
    assert.notEqual(await exitCodeWithin(service), 0, service.output());
    const lines = plainLines(service.output());
    assert.equal(lines.length, 1, service.output());
    assert.match(lines[0]!, /^fatal: NATS login lacks permissions ROLE=all needs: /);
    for (const missing of [
      'subscribe live.*.*',
      'publish $JS.API.STREAM.PURGE.EVENTS_0',
      'publish $JS.API.STREAM.PURGE.TURNS',
      'publish ctl.*.*',
    ]) {
      assert.ok(lines[0]!.includes(missing), `${missing} in: ${lines[0]}`);
    }
    assert.match(lines[0]!, /log in as user service/);
    assert.ok(!lines[0]!.includes(passwords.worker), 'the password is not printed');
    assert.ok(!service.output().includes('service listening'), 'it never served');
  });

  it('ROLE=worker logged in as api exits naming what claiming turns needs', async (t) => {
    const { service } = await start(t, 'worker', 'api');
    assert.notEqual(await exitCodeWithin(service), 0, service.output());
    const lines = plainLines(service.output());
    assert.equal(lines.length, 1, service.output());
    assert.match(lines[0]!, /^fatal: NATS login lacks permissions ROLE=worker needs: .*publish \$JS\.API\.CONSUMER\.INFO\.TURNS\.workers/);
    assert.match(lines[0]!, /publish agent_sessions\.ops\.\*\.alive/);
    assert.ok(!lines[0]!.includes('live.*.*'), 'a worker is not asked for what only the API needs');
  });

  it('ROLE=all as service (the shipped permissions) starts and serves', async (t) => {
    const logBefore = nats.log().length;
    const { service, url } = await start(t, 'all', 'service');
    await service.waitHealthy(url, 120_000);
    const log = nats.log().slice(logBefore);
    assert.ok(!/Violation/.test(log), `the probes stay inside the shipped permissions:\n${log.slice(-2000)}`);
  });
});
