/**
 * Issue 30 item 17: the earlier API's Python SDK (everruns/sdk python/, 0.2.1) against the
 * embedded service. The SDK is on no index this project installs from, so
 * test/compat/python/sdk_examples.py replays its basic.py and initial_files.py with the SDK's
 * own dependencies (scripts/python-deps.sh: Debian's python3, httpx, httpx-sse, pydantic 2 from
 * the machine's package index). Its request models send `initial_files: []` like the SDK's, and
 * its response models require what the SDK's require (an agent's `harness_id`).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { startTestApp } from '../helpers/app.js';
import { REPO_ROOT } from '../client/helpers.js';

const run = promisify(execFile);

describe('earlier public API Python SDK', () => {
  it('its basic and initial_files examples run against the embedded service', async (t) => {
    const { stdout: python } = await run('bash', [join(REPO_ROOT, 'scripts', 'python-deps.sh')], { timeout: 240_000 });
    const app = await startTestApp(t, { mode: 'pglite' });
    const { stdout } = await run(python.trim(), [join(REPO_ROOT, 'test', 'compat', 'python', 'sdk_examples.py')], {
      env: { ...process.env, EVERRUNS_API_URL: app.url, EVERRUNS_API_KEY: app.adminKey },
      timeout: 120_000,
    });
    const lines = stdout.trim().split('\n');
    assert.match(lines[0]!, /^basic: agent [0-9a-f-]{36} harness 00000000-0000-4000-8000-000000000001 status active$/);
    assert.ok(lines.includes('basic: event output.message.completed'), stdout);
    assert.ok(lines.includes('initial_files: /README.md 15 bytes readonly=True'), stdout);
    assert.ok(lines.includes('initial_files: /src/app.py 45 bytes readonly=False'), stdout);
    assert.match(lines.at(-1)!, /^initial_files: message [0-9a-f-]{36}$/);
  });
});
