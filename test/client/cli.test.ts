import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestApp } from '../helpers/app.js';
import { REPO_ROOT, buildPackages } from './helpers.js';

const BIN = join(REPO_ROOT, 'packages', 'cli', 'dist', 'bin.js');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI with a private config dir; `onStdout` may act on the child while it runs. */
function cli(
  configHome: string,
  args: string[],
  opts: { stdin?: string; onStdout?: (text: string, child: ReturnType<typeof spawn>) => void } = {},
): Promise<Run> {
  const env: NodeJS.ProcessEnv = { ...process.env, XDG_CONFIG_HOME: configHome, NO_COLOR: '1' };
  delete env['AGENT_SESSION_URL'];
  delete env['AGENT_SESSION_KEY'];
  delete env['AGENT_SESSION_CONFIG'];
  const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => {
    stdout += d;
    opts.onStdout?.(stdout, child);
  });
  child.stderr.on('data', (d) => (stderr += d));
  child.stdin.end(opts.stdin ?? '');
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

const ok = (r: Run) => assert.equal(r.code, 0, `exit ${r.code}: ${r.stderr}`);

describe('agent-session CLI against the service', () => {
  before(() => buildPackages());

  it('login (0600 config), agents create/ls/export/import, sessions create/ls/rm, chat one turn, events tail, admin', async (t) => {
    const app = await startTestApp(t, { env: { SSE_CYCLE_MS: 250, SSE_HEARTBEAT_MS: 100 } });
    const home = mkdtempSync(join(tmpdir(), 'ass-cli-'));
    t.after(() => rmSync(home, { recursive: true, force: true }));

    const notLoggedIn = await cli(home, ['agents', 'ls']);
    assert.equal(notLoggedIn.code, 2);
    assert.match(notLoggedIn.stderr, /not logged in/);
    const bad = await cli(home, ['login', '--url', app.url, '--key', 'wrong-key-0123456789abcdef']);
    assert.equal(bad.code, 3, bad.stderr);

    ok(await cli(home, ['login', '--url', app.url, '--key-stdin'], { stdin: app.adminKey + '\n' }));
    const file = join(home, 'agent-session', 'config.json');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')), { url: app.url, key: app.adminKey });

    const created = await cli(home, [
      'agents',
      'create',
      '--name',
      'cli-agent',
      '--prompt',
      'Be brief.',
      '--capability',
      'current_time',
      '--json',
    ]);
    ok(created);
    const agent = JSON.parse(created.stdout);
    assert.equal(agent.name, 'cli-agent');
    const ls = JSON.parse((await cli(home, ['agents', 'ls', '--json'])).stdout);
    assert.deepEqual(Object.keys(ls), ['data', 'total'], 'every ls --json prints the API page shape');
    assert.deepEqual(
      ls.data.map((a: { id: string }) => a.id),
      [agent.id],
    );
    const table = await cli(home, ['agents', 'ls']);
    assert.match(table.stdout, /^ID\s+NAME\s+STATUS/);
    assert.match(table.stdout, new RegExp(`${agent.id}\\s+cli-agent\\s+active`));

    const exported = await cli(home, ['agents', 'export', agent.id]);
    ok(exported);
    assert.match(exported.stdout, /^---\n[\s\S]*name: cli-agent[\s\S]*Be brief\./);
    const imported = await cli(home, ['agents', 'import', '-', '--json'], { stdin: exported.stdout.replace('cli-agent', 'cli-agent-2') });
    ok(imported);
    assert.equal(JSON.parse(imported.stdout).name, 'cli-agent-2');

    const session = await cli(home, ['sessions', 'create', '--agent', agent.id, '--title', 'from the cli']);
    ok(session);
    const sid = session.stdout.trim();
    assert.match(sid, /^[0-9a-f-]{36}$/);
    const sessions = JSON.parse((await cli(home, ['sessions', 'ls', '--json'])).stdout);
    assert.deepEqual(
      sessions.data.map((s: { id: string }) => s.id),
      [sid],
    );
    assert.deepEqual(Object.keys(sessions), ['data', 'total', 'offset', 'limit']);

    const chat = await cli(home, ['chat', sid, '-m', 'hello from the cli']);
    ok(chat);
    assert.equal(chat.stdout, 'hello from the cli\n');
    const viaStdin = await cli(home, ['chat', sid], { stdin: '@think 3\n@tool get_current_time {}\nsecond turn' });
    ok(viaStdin);
    assert.match(viaStdin.stdout, /^thinking: thought1 thought2 thought3\n/);
    assert.match(viaStdin.stdout, /→ get_current_time\(\{\}\)\n✓ get_current_time\n/);

    const stored = await cli(home, ['events', 'tail', sid, '--json', '--no-follow']);
    ok(stored);
    const lines = stored.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      lines.map((e) => e.sequence),
      lines.map((_, i) => i + 1),
    );
    assert.deepEqual(
      lines.slice(0, 3).map((e) => e.type),
      ['session.created', 'input.message', 'session.started'],
    );
    assert.equal(lines.filter((e) => e.type === 'turn.completed').length, 2);

    // Follow across forced cycles (250 ms): every event once, in order.
    const total = lines.length + 40;
    const tail = cli(home, ['events', 'tail', sid, '--json', '--limit', String(total)]);
    for (let i = 0; i < 40; i++) {
      await app.app.services.bus.events.append(sid, [
        { type: 'output.message.delta', data: { turn_id: 't', delta: String(i), accumulated: '' } },
      ]);
      await sleep(25);
    }
    const followed = await tail;
    ok(followed);
    assert.deepEqual(
      followed.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).sequence),
      Array.from({ length: total }, (_, i) => i + 1),
    );

    const key = await cli(home, ['admin', 'keys', 'create', '--name', 'ci', '--json']);
    ok(key);
    const keys = JSON.parse((await cli(home, ['admin', 'keys', 'ls', '--json'])).stdout);
    assert.ok(keys.data.some((k: { id: string }) => k.id === JSON.parse(key.stdout).id));
    assert.equal(keys.total, keys.data.length);
    const users = JSON.parse((await cli(home, ['admin', 'users', 'ls', '--json'])).stdout);
    assert.deepEqual(
      users.data.map((u: { email: string }) => u.email),
      ['admin@localhost'],
    );
    const rotate = await cli(home, ['admin', 'rotate-keys']);
    assert.equal(rotate.code, 2);
    assert.match(rotate.stderr, /npm run rotate-keys/);

    ok(await cli(home, ['sessions', 'rm', sid]));
    assert.equal((await app.request('GET', `/v1/sessions/${sid}`)).status, 404);
  });

  it('chat: Ctrl-C (SIGINT) cancels the running turn and exits 130', async (t) => {
    const app = await startTestApp(t);
    const home = mkdtempSync(join(tmpdir(), 'ass-cli-'));
    t.after(() => rmSync(home, { recursive: true, force: true }));
    const agent = await app.request('POST', '/v1/agents', { body: { name: 'slow', system_prompt: 'p' } });
    const sid = (await app.request('POST', '/v1/sessions', { body: { agent_id: agent.body.id } })).body.id;
    ok(await cli(home, ['login', '--url', app.url, '--key', app.adminKey]));
    let interrupted = false;
    const run = await cli(home, ['chat', sid, '-m', '@tokens 400 delay=20'], {
      onStdout: (text, child) => {
        if (!interrupted && text.includes('lorem')) {
          interrupted = true;
          child.kill('SIGINT');
        }
      },
    });
    assert.equal(run.code, 130, run.stderr);
    assert.match(run.stderr, /cancelling the turn/);
    assert.match(run.stdout, /Work was cancelled by user\.\n$/);
    const events = (await app.request('GET', `/v1/sessions/${sid}/events`)).body.data.map((e: { type: string }) => e.type);
    assert.ok(events.includes('turn.cancelled'), events.join(','));
    assert.equal(events.at(-1), 'session.idled');
  });

  it('sessions compact: waits for the outcome (the summary, or nothing to compact); --no-wait prints the compaction turn', async (t) => {
    const app = await startTestApp(t);
    const home = mkdtempSync(join(tmpdir(), 'ass-cli-'));
    t.after(() => rmSync(home, { recursive: true, force: true }));
    const agent = await app.request('POST', '/v1/agents', { body: { name: 'notes', system_prompt: 'p' } });
    const sid = (await app.request('POST', '/v1/sessions', { body: { agent_id: agent.body.id } })).body.id;
    ok(await cli(home, ['login', '--url', app.url, '--key', app.adminKey]));
    ok(await cli(home, ['chat', sid, '-m', 'first note', 'second note']));

    const compacted = await cli(home, ['sessions', 'compact', sid, '--instructions', 'Keep the notes.']);
    ok(compacted);
    assert.match(compacted.stdout, /^compacted: \d+ → \d+ tokens\n/);
    const again = await cli(home, ['sessions', 'compact', sid, '--json']);
    ok(again);
    const outcome = JSON.parse(again.stdout);
    assert.equal(outcome.status, 'nothing_to_compact', 'only the newest reply is left');
    assert.match(outcome.error, /Nothing to compact/);
    const queued = await cli(home, ['sessions', 'compact', sid, '--no-wait']);
    ok(queued);
    const turnId = queued.stdout.trim();
    // Its worker appends its first events right after the answer.
    let events: { id: string; type: string; data: Record<string, unknown> }[] = [];
    for (let i = 0; i < 200 && !events.some((e) => e.id === turnId); i++, await sleep(50))
      events = (await app.request('GET', `/v1/sessions/${sid}/events?limit=1000`)).body.data;
    const started = events.find((e) => e.id === turnId);
    assert.equal(started?.data['kind'], 'compaction', 'the printed id is the compaction turn');
    assert.equal(events.filter((e) => e.type === 'session.compacted').length, 1);
  });

  it('a stopped server: one line naming the URL and the cause, exit 1', async (t) => {
    const home = mkdtempSync(join(tmpdir(), 'ass-cli-'));
    t.after(() => rmSync(home, { recursive: true, force: true }));
    // A port that was just free: nothing listens there.
    const server = createServer().listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    const url = `http://127.0.0.1:${port}`;
    for (const args of [
      ['agents', 'ls'],
      ['sessions', 'ls', '--json'],
    ]) {
      const run = await cli(home, ['--url', url, '--key', 'ask_unused', ...args]);
      assert.equal(run.code, 1, run.stderr);
      assert.equal(
        run.stderr,
        `error: cannot reach ${url}/v1/${args[0]}${args[0] === 'sessions' ? '?offset=0&limit=20' : ''}: connect ECONNREFUSED 127.0.0.1:${port}\n`,
      );
    }
  });
});
