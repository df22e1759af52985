import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { TEST_ADMIN_KEY } from '../helpers/app.js';
import { request } from '../helpers/http.js';
import { freePort } from '../helpers/nats-server.js';
import { spawnService } from '../helpers/service-process.js';
import { LOCK_FILE } from '../../src/db/data-dir-lock.js';

const EMBEDDED = { DATABASE_URL: '', NATS_URL: '', BOOTSTRAP_ADMIN_API_KEY: TEST_ADMIN_KEY };

async function sessionIds(url: string): Promise<string[]> {
  const res = await request(url, 'GET', '/v1/sessions?limit=100', { key: TEST_ADMIN_KEY });
  assert.equal(res.status, 200, res.text);
  return (res.body.data as { id: string }[]).map((s) => s.id).sort();
}

async function createSessions(url: string, n: number): Promise<string[]> {
  const agent = await request(url, 'POST', '/v1/agents', { key: TEST_ADMIN_KEY, body: { name: `a-${Date.now()}`, system_prompt: 'p' } });
  assert.equal(agent.status, 201, agent.text);
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const s = await request(url, 'POST', '/v1/sessions', { key: TEST_ADMIN_KEY, body: { agent_id: agent.body.id } });
    assert.equal(s.status, 201, s.text);
    ids.push(s.body.id);
  }
  return ids;
}

describe('single writer: the embedded data directory and the port belong to one process', () => {
  it('a second start on the same DATA_DIR fails within 2 s naming the holder; the port is exclusive; rotate-keys is refused; the first keeps its data; a dead holder is taken over', async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'ass-single-writer-'));
    t.after(() => rmSync(dataDir, { recursive: true, force: true }));
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const first = spawnService({ ...EMBEDDED, PORT: String(port), DATA_DIR: dataDir }, t);
    await first.waitHealthy(url, 120_000);
    const before = await createSessions(url, 3);
    const lock = JSON.parse(readFileSync(join(dataDir, LOCK_FILE), 'utf8'));
    assert.equal(lock.pid, first.proc.pid);
    assert.equal(lock.port, port);
    assert.equal(lock.listening, true);

    // Same directory, another port: refused before the app is even loaded.
    const started = Date.now();
    const second = spawnService({ ...EMBEDDED, PORT: String(await freePort()), DATA_DIR: dataDir }, t);
    const code = await second.exited;
    const refusedMs = Date.now() - started;
    t.diagnostic(`second start refused after ${refusedMs} ms`);
    assert.equal(code, 3, second.output());
    assert.ok(refusedMs < 2000, `refused after ${refusedMs} ms`);
    assert.match(
      second.output(),
      new RegExp(`fatal: cannot start: data directory .* is in use by service pid ${first.proc.pid}, port ${port} on host`),
    );

    // rotate-keys against the directory in use: refused, naming the holder.
    const rotate = spawnService({ ...EMBEDDED, DATA_DIR: dataDir }, t, 'src/crypto/rotate-command.ts');
    assert.equal(await rotate.exited, 3, rotate.output());
    assert.match(
      rotate.output(),
      new RegExp(`rotate-keys refused: data directory .* is in use by service pid ${first.proc.pid}, port ${port}`),
    );

    // Same port, another directory: the listen fails (no SO_REUSEPORT sharing of the port).
    const otherDir = mkdtempSync(join(tmpdir(), 'ass-single-writer-other-'));
    t.after(() => rmSync(otherDir, { recursive: true, force: true }));
    const samePort = spawnService({ ...EMBEDDED, PORT: String(port), DATA_DIR: otherDir }, t);
    assert.equal(await samePort.exited, 1, samePort.output());
    assert.match(samePort.output(), new RegExp(`fatal: cannot listen on 127.0.0.1:${port}`));

    // The first instance kept serving everything and keeps accepting writes.
    const after = await createSessions(url, 2);
    assert.deepEqual(await sessionIds(url), [...before, ...after].sort());

    // Killed without cleanup, its lock stays; the next start takes it over and finds every row.
    first.proc.kill('SIGKILL');
    await first.exited;
    assert.equal(JSON.parse(readFileSync(join(dataDir, LOCK_FILE), 'utf8')).pid, first.proc.pid, 'stale lock left behind');
    const third = spawnService({ ...EMBEDDED, PORT: String(port), DATA_DIR: dataDir }, t);
    await third.waitHealthy(url, 120_000);
    assert.deepEqual(await sessionIds(url), [...before, ...after].sort());
    assert.equal(JSON.parse(readFileSync(join(dataDir, LOCK_FILE), 'utf8')).pid, third.proc.pid);
    await third.stop();
    assert.equal(await third.exited, 0);
    assert.throws(() => readFileSync(join(dataDir, LOCK_FILE)), /ENOENT/, 'a clean stop removes the lock');
    const rotateStopped = spawnService({ ...EMBEDDED, DATA_DIR: dataDir }, t, 'src/crypto/rotate-command.ts');
    assert.equal(await rotateStopped.exited, 0, rotateStopped.output());
    assert.throws(() => readFileSync(join(dataDir, LOCK_FILE)), /ENOENT/, 'rotate-keys releases the lock');
  });
});
