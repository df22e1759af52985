import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import pg from 'pg';
import { TEST_ADMIN_KEY, TEST_SECRETS_KEY } from '../helpers/app.js';
import { request } from '../helpers/http.js';
import { freePort, natsServiceEnv, startNatsServer } from '../helpers/nats-server.js';
import { createTestDatabase } from '../helpers/postgres.js';
import { ROOT, spawnService } from '../helpers/service-process.js';

const git = (...args: string[]) => spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' });
/** Where migrations live, and lived before issue 18 named the folder after the database. */
const MIGRATION_DIRS = ['src/db/migrations/', 'src/store/migrations/'];

/**
 * The previous release as far as the schema goes: the newest commit whose set of migration files
 * differs from this checkout's (the parent of the commit that added the last migration). Its code
 * is the "old" instance; this checkout is the "new" one.
 */
function previousMigrationSet(): string | undefined {
  const migrationFiles = (rev: string) =>
    git('ls-tree', '--name-only', rev, ...MIGRATION_DIRS)
      .stdout.split('\n')
      .filter((f) => /\/\d{4}-[^/]+\.ts$/.test(f))
      .map((f) => f.slice(f.lastIndexOf('/') + 1))
      .sort()
      .join(',');
  const current = migrationFiles('HEAD');
  for (const commit of git('log', '--format=%H', '--', ...MIGRATION_DIRS)
    .stdout.split('\n')
    .filter(Boolean)) {
    const parent = git('rev-parse', '--verify', '--quiet', `${commit}^`).stdout.trim();
    if (!parent) return undefined;
    if (migrationFiles(parent) !== current) return parent;
  }
  return undefined;
}

async function appliedMigrations(databaseUrl: string): Promise<string[]> {
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    return (await c.query('select name from mikro_orm_migrations order by id')).rows.map((r) => r.name as string);
  } finally {
    await c.end();
  }
}

/** Organisations whose kept session or agent count differs from their rows, when the schema keeps counts. */
async function keptCountsOff(databaseUrl: string): Promise<unknown[]> {
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    const kept = await c.query(`select to_regclass('org_row_counts') is not null as present`);
    if (!kept.rows[0].present) return [];
    const off = await c.query(`select t.counted, r.organization_id, r.n, coalesce(k.n, 0) as kept
      from (values ('sessions'), ('agents')) t(counted)
      cross join lateral (
        select organization_id, count(*) as n from sessions where t.counted = 'sessions' group by organization_id
        union all select organization_id, count(*) from agents where t.counted = 'agents' group by organization_id) r
      left join org_row_counts k on k.organization_id = r.organization_id and k.counted = t.counted
      where coalesce(k.n, 0) <> r.n`);
    return off.rows;
  } finally {
    await c.end();
  }
}

/** Sends a message and waits until the session is idle again; returns the session's events. */
async function turn(url: string, sessionId: string, text: string): Promise<{ type: string; id: string }[]> {
  const sent = await request(url, 'POST', `/v1/sessions/${sessionId}/messages`, {
    key: TEST_ADMIN_KEY,
    body: { message: { content: [{ type: 'text', text }] } },
  });
  assert.equal(sent.status, 201, sent.text);
  const deadline = Date.now() + 30_000;
  for (;;) {
    const events = (await request(url, 'GET', `/v1/sessions/${sessionId}/events?limit=1000`, { key: TEST_ADMIN_KEY })).body.data as {
      type: string;
      id: string;
      data: any;
    }[];
    const idled = events.filter((e) => e.type === 'session.idled');
    const inputs = events.filter((e) => e.type === 'input.message');
    if (idled.length === inputs.length && inputs.some((e) => e.data.message.id === sent.body.id)) return events;
    if (Date.now() > deadline) throw new Error(`turn "${text}" did not finish: ${events.map((e) => e.type).join(',')}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function newSession(url: string): Promise<string> {
  const agent = await request(url, 'POST', '/v1/agents', { key: TEST_ADMIN_KEY, body: { name: `a-${Math.random()}`, system_prompt: 'p' } });
  assert.equal(agent.status, 201, agent.text);
  const s = await request(url, 'POST', '/v1/sessions', { key: TEST_ADMIN_KEY, body: { agent_id: agent.body.id } });
  assert.equal(s.status, 201, s.text);
  return s.body.id;
}

describe('runbook rehearsal: rolling upgrade across a migration', () => {
  it('an instance of the previous migration set keeps working beside a new one that migrates the shared database', async (t) => {
    const old = previousMigrationSet();
    if (!old) return t.skip('needs the git history of src/db/migrations (a shallow clone has none)');
    // The old code as a release would ship it, beside this checkout's dependencies.
    const oldDir = mkdtempSync(join(tmpdir(), 'ass-old-release-'));
    t.after(() => rmSync(oldDir, { recursive: true, force: true }));
    const archive = spawnSync('sh', ['-c', `git -C "${ROOT}" archive ${old} | tar -x -C "${oldDir}"`], { encoding: 'utf8' });
    assert.equal(archive.status, 0, archive.stderr);
    symlinkSync(join(ROOT, 'node_modules'), join(oldDir, 'node_modules'));

    const nats = await startNatsServer({ t });
    const db = await createTestDatabase('rolling');
    t.after(() => db.drop());
    const env = {
      ...natsServiceEnv(nats),
      DATABASE_URL: db.url,
      SECRETS_ENCRYPTION_KEY: TEST_SECRETS_KEY,
      BOOTSTRAP_ADMIN_API_KEY: TEST_ADMIN_KEY,
      EXPECTED_INSTANCES: '2',
    };
    const [oldPort, newPort] = [await freePort(), await freePort()];
    const oldUrl = `http://127.0.0.1:${oldPort}`;
    const newUrl = `http://127.0.0.1:${newPort}`;

    const oldInstance = spawnService({ ...env, PORT: String(oldPort), INSTANCE_ID: 'old' }, t, 'src/main.ts', oldDir);
    await oldInstance.waitHealthy(oldUrl, 90_000);
    const before = await appliedMigrations(db.url);
    const early = await newSession(oldUrl);
    await turn(oldUrl, early, 'before the upgrade');

    // The new release starts beside it and applies its migrations to the live database.
    const newInstance = spawnService({ ...env, PORT: String(newPort), INSTANCE_ID: 'new' }, t);
    await newInstance.waitHealthy(newUrl, 90_000);
    const after = await appliedMigrations(db.url);
    assert.ok(after.length > before.length, `the new instance applied migrations (${before.length} → ${after.length})`);
    assert.deepEqual(after.slice(0, before.length), before, 'forward only: the earlier migrations stay as they were');
    t.diagnostic(`old at ${before.at(-1)}, new applied ${after.slice(before.length).join(', ')}`);

    // Side by side on the migrated schema: the old instance keeps serving reads, writes and turns…
    assert.equal((await request(oldUrl, 'GET', '/health')).status, 200);
    const late = await newSession(oldUrl);
    await turn(oldUrl, late, 'old instance, new schema');
    // …and each sees what the other wrote, on sessions from before and after the upgrade.
    await turn(newUrl, early, 'new instance, session from before');
    const seenByOld = await turn(oldUrl, early, 'old instance again');
    assert.equal(seenByOld.filter((e) => e.type === 'turn.completed').length, 3);
    assert.equal((await request(newUrl, 'GET', `/v1/sessions/${late}`, { key: TEST_ADMIN_KEY })).status, 200);
    // Counts a migration keeps (org_row_counts, 0029) hold rows from before it and from the old instance after it.
    assert.deepEqual(await keptCountsOff(db.url), [], 'org_row_counts match the rows');

    // The old instance leaves (the end of the roll); the new one carries on.
    await oldInstance.stop();
    assert.equal(await oldInstance.exited, 0, oldInstance.output().slice(-2000));
    await turn(newUrl, late, 'after the roll');
  });
});
