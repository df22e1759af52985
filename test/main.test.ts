import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { freePort } from './helpers/nats-server.js';
import { request } from './helpers/http.js';
import { openSse } from './helpers/sse-client.js';

function startMain(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, output: () => out };
}

async function waitHealthy(url: string, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url + '/health')).status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('service did not become healthy');
}

describe('src/main.ts (the process the README starts)', () => {
  it('fails fast with one clear line on invalid configuration', async () => {
    const p = startMain({ PORT: 'not-a-port', DATA_DIR: join(tmpdir(), 'never-used') });
    assert.equal(await p.exited, 2);
    const lines = p.output().trim().split('\n');
    assert.equal(lines.length, 1);
    assert.match(lines[0]!, /^invalid configuration: PORT /);
  });

  it('starts embedded with no configuration, writes the admin key 0600, and shuts down gracefully on SIGTERM', async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'ass-main-'));
    t.after(() => rmSync(dataDir, { recursive: true, force: true }));
    const port = await freePort();
    const p = startMain({
      PORT: String(port),
      DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
      BOOTSTRAP_ADMIN_API_KEY: '',
      DATABASE_URL: '',
      NATS_URL: '',
    });
    t.after(() => p.child.kill('SIGKILL'));
    const url = `http://127.0.0.1:${port}`;
    await waitHealthy(url);
    const keyFile = join(dataDir, 'admin-api-key');
    assert.equal(statSync(keyFile).mode & 0o777, 0o600);
    const key = readFileSync(keyFile, 'utf8').trim();
    assert.ok(p.output().includes(key), 'the generated key is printed once on first start');
    assert.ok(
      p.output().includes(`Admin API key (shown once): ${key}\nConsole: ${url}/console (sign in with this key)\n`),
      'the console URL is printed next to it',
    );
    assert.equal((await request(url, 'GET', '/v1/capabilities', { key })).status, 200);

    const agent = await request(url, 'POST', '/v1/agents', { key, body: { name: 'a', system_prompt: 'p' } });
    const session = await request(url, 'POST', '/v1/sessions', { key, body: { agent_id: agent.body.id } });
    const sse = await openSse(`${url}/v1/sessions/${session.body.id}/sse`, { key });
    await sse.waitFor((e) => e.event === 'session.created');

    const started = Date.now();
    p.child.kill('SIGTERM');
    await sse.done;
    const last = sse.events.at(-1)!;
    assert.equal(last.event, 'disconnecting');
    assert.equal(JSON.parse(last.data).reason, 'server_shutdown');
    assert.equal(await p.exited, 0);
    assert.ok(Date.now() - started < 15_000, 'within the shutdown bound');
    assert.ok(
      !p
        .output()
        .split('\n')
        .some((l) => l.includes('"level":50')),
      'no error logged during shutdown',
    );
  });
});
