import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import pg from 'pg';
import { TEST_ADMIN_KEY, TEST_SECRETS_KEY } from '../helpers/app.js';
import { request } from '../helpers/http.js';
import { freePort, natsServiceEnv, startNatsServer } from '../helpers/nats-server.js';
import { createTestDatabase, TEST_PG_URL } from '../helpers/postgres.js';
import { spawnService } from '../helpers/service-process.js';

const count = (text: string, re: RegExp) => text.split('\n').filter((l) => re.test(l)).length;

/** A database URL on the test server whose database does not exist yet; dropped after the test. */
function missingDatabase(t: { after(fn: () => unknown): void }): string {
  const name = `ass_cold_${randomBytes(4).toString('hex')}`;
  t.after(async () => {
    const c = new pg.Client({ connectionString: TEST_PG_URL });
    await c.connect();
    await c.query(`drop database if exists ${name} with (force)`);
    await c.end();
  });
  const url = new URL(TEST_PG_URL);
  url.pathname = '/' + name;
  return url.toString();
}

describe('distributed cold starts', () => {
  it('3 instances started at once on a PostgreSQL server without the database all come up: one creates it, one migrates, one bootstraps', async (t) => {
    const nats = await startNatsServer({ t });
    const databaseUrl = missingDatabase(t);
    const ports = await Promise.all([freePort(), freePort(), freePort()]);
    const instances = ports.map((port, i) =>
      spawnService(
        {
          ...natsServiceEnv(nats),
          DATABASE_URL: databaseUrl,
          SECRETS_ENCRYPTION_KEY: TEST_SECRETS_KEY,
          BOOTSTRAP_ADMIN_API_KEY: TEST_ADMIN_KEY,
          PORT: String(port),
          INSTANCE_ID: `cold-${i}`,
          EXPECTED_INSTANCES: '3',
        },
        t,
      ),
    );
    await Promise.all(instances.map((p, i) => p.waitHealthy(`http://127.0.0.1:${ports[i]}`, 90_000)));
    const logs = instances.map((p) => p.output());
    const all = logs.join('\n');
    assert.equal(count(all, /"msg":"database created"/), 1, 'exactly one instance created the database');
    assert.equal(count(all, /"msg":"store migrations applied"/), 1, 'exactly one instance applied the migrations');
    assert.equal(count(all, /"level":(50|60)/), 0, 'no errors logged');
    // One deployment: an agent created through one instance is seen through the others.
    const agent = await request(`http://127.0.0.1:${ports[0]}`, 'POST', '/v1/agents', {
      key: TEST_ADMIN_KEY,
      body: { name: 'cold', system_prompt: 'p' },
    });
    assert.equal(agent.status, 201, agent.text);
    for (const port of ports.slice(1)) {
      assert.equal((await request(`http://127.0.0.1:${port}`, 'GET', `/v1/agents/${agent.body.id}`, { key: TEST_ADMIN_KEY })).status, 200);
    }
  });

  it('NATS set-up waits for a nats-server that starts late, saying what it waits for, then comes up', async (t) => {
    const db = await createTestDatabase('nats_late');
    t.after(() => db.drop());
    const natsPort = await freePort();
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const instance = spawnService(
      {
        NATS_URL: `nats://127.0.0.1:${natsPort}`,
        DATABASE_URL: db.url,
        SECRETS_ENCRYPTION_KEY: TEST_SECRETS_KEY,
        BOOTSTRAP_ADMIN_API_KEY: TEST_ADMIN_KEY,
        PORT: String(port),
      },
      t,
    );
    const waiting = new RegExp(
      `waiting for a NATS server to accept connections at nats://127\\.0\\.0\\.1:${natsPort}; retrying in \\d+ ms`,
    );
    await instance.waitForOutput(waiting, 60_000);
    // Still waiting a few attempts later (backoff), not exited.
    await instance.waitForOutput(/"attempt":3,/, 30_000);
    assert.equal(instance.proc.exitCode, null);
    const nats = await startNatsServer({ t, port: natsPort });
    await instance.waitHealthy(url, 60_000);
    assert.match(instance.output(), /"msg":"connected to NATS"/);
    assert.doesNotMatch(instance.output(), /fatal/);
    // And it works on the late server: an agent round-trips, the bus answers /health.
    const health = await request(url, 'GET', '/health');
    assert.equal(health.body.checks.bus, 'ok');
    void nats;
  });
});
