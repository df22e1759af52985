/**
 * Issue 30 item 20: starting the service (scripts/start.sh) downloads no nats-server. The
 * service never runs one itself (embedded mode has an in-process bus, distributed mode connects
 * to NATS_URL); only the tests spawn their own, so only scripts/test.sh needs it.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { REPO_ROOT } from '../client/helpers.js';

const run = promisify(execFile);

describe('scripts/bootstrap.sh --node-only (what scripts/start.sh runs)', () => {
  it('in a fresh tree puts Node on PATH and installs no nats-server', async (t) => {
    const root = mkdtempSync(join(tmpdir(), 'ass-bootstrap-'));
    t.after(() => rmSync(root, { recursive: true, force: true }));
    mkdirSync(join(root, 'scripts'));
    copyFileSync(join(REPO_ROOT, 'scripts', 'bootstrap.sh'), join(root, 'scripts', 'bootstrap.sh'));
    // This test's Node (>= 22.17) is on PATH, as on a developer's machine: nothing to fetch for Node.
    const env = { ...process.env, PATH: `${dirname(process.execPath)}:${process.env['PATH']}` };
    const { stdout, stderr } = await run('bash', [join(root, 'scripts', 'bootstrap.sh'), '--node-only'], { env, timeout: 120_000 });
    assert.equal(stdout, `export PATH="${dirname(process.execPath)}:$PATH"\n`);
    assert.doesNotMatch(stderr, /nats-server/);
    assert.equal(existsSync(join(root, '.cache', 'toolchain', 'bin', 'nats-server')), false);
    assert.equal(existsSync(join(root, '.cache', 'toolchain', 'apt')), false, 'no apt download either');
  });

  it('is what scripts/start.sh runs (scripts/test.sh keeps the full bootstrap for the NATS tests)', () => {
    const lines = (name: string) =>
      readFileSync(join(REPO_ROOT, 'scripts', name), 'utf8')
        .split('\n')
        .filter((l) => l.includes('scripts/bootstrap.sh'));
    assert.deepEqual(lines('start.sh'), ['eval "$(bash scripts/bootstrap.sh --node-only)"']);
    assert.deepEqual(lines('test.sh'), ['eval "$(bash scripts/bootstrap.sh)"']);
  });
});
