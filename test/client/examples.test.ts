import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { startTestApp } from '../helpers/app.js';
import { REPO_ROOT, buildPackages } from './helpers.js';

const run = promisify(execFile);

/** Runs examples/client/<name>.ts as a user would (tsx), against the test service. */
async function example(url: string, key: string, name: string, args: string[] = []): Promise<string> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'examples', 'client', name), ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, AGENT_SESSION_URL: url, AGENT_SESSION_KEY: key },
    timeout: 60_000,
  });
  return stdout;
}

describe('examples/client', () => {
  before(() => buildPackages());

  it('quickstart.ts, client-tools.ts and tail-events.ts run against the embedded service', async (t) => {
    const app = await startTestApp(t, { mode: 'pglite' });
    const quick = await example(app.url, app.adminKey, 'quickstart.ts');
    assert.match(quick, /^Hello! What can you do\?\n\[completed\] session [0-9a-f-]{36}, \d+ events\n$/);
    const tools = await example(app.url, app.adminKey, 'client-tools.ts');
    assert.equal(tools.split('\n')[0], 'agent asks: What is your favourite colour?');
    assert.match(tools, /reply: Received 1 tool result\. ask_user: \{"answer":"blue"\}/);
    const tail = await example(app.url, app.adminKey, 'tail-events.ts');
    const lines = tail.trim().split('\n');
    assert.equal(lines[0], '1 session.created');
    assert.equal(lines.at(-1)?.split(' ')[1], 'session.idled');
    assert.ok(lines.some((l) => l.endsWith(' turn.started')));
    assert.ok(!lines.some((l) => l.includes('llm.generation')), 'excluded type');
    assert.deepEqual(
      lines.map((l) => Number(l.split(' ')[0])),
      [...lines.map((l) => Number(l.split(' ')[0]))].sort((a, b) => a - b),
    );
  });
});
