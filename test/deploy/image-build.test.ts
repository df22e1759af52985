import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { TEST_ADMIN_KEY } from '../helpers/app.js';
import { freePort } from '../helpers/nats-server.js';
import { ROOT } from '../helpers/service-process.js';
import { buildContextFiles, copyFiles, parseDockerfile, runStage, stageCommand, stageEnv } from './image-context.js';

/**
 * deploy/Dockerfile built from a clean tree (issue 30 item 12): the allow-list in
 * deploy/Dockerfile.dockerignore once admitted scripts/build.sh but not scripts/bundle.ts, which
 * it runs, so `docker compose up --build` stopped at ERR_MODULE_NOT_FOUND. With no Docker engine
 * here the stages are replayed (test/deploy/image-context.ts): the context is `git ls-files`
 * filtered by the dockerignore with Docker's matching rules, the build stage's COPY and RUN steps
 * run in it, and the runtime stage's CMD must answer /health. `npm ci` (offline: impossible) is
 * replaced by a link to this checkout's node_modules, installed from the same lock file.
 */

const DOCKERFILE = 'deploy/Dockerfile';

test('the image builds from the dockerignored context of a clean tree and its CMD serves /health', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'image-build-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const context = join(dir, 'context');
  const files = buildContextFiles(ROOT, `${DOCKERFILE}.dockerignore`);
  copyFiles(ROOT, files, context);
  assert.ok(!files.some((f) => f.startsWith('test/') || f.startsWith('deploy/')), 'the context holds only what the image needs');

  const stages = parseDockerfile(readFileSync(join(ROOT, DOCKERFILE), 'utf8'));
  assert.deepEqual(
    stages.map((s) => s.name),
    ['deps', 'build', 'stage2'],
  );
  const roots: Record<string, string> = {};
  let runtime = { workdir: '', output: '' };
  for (const stage of stages) {
    roots[stage.name] = join(dir, stage.name);
    mkdirSync(roots[stage.name]!);
    runtime = runStage(stage, roots[stage.name]!, context, roots, join(ROOT, 'node_modules'));
  }
  assert.ok(existsSync(join(roots['build']!, 'app/dist/server/main.js')), 'the build stage bundled the service');

  const runtimeStage = stages.at(-1)!;
  const [node, ...args] = stageCommand(runtimeStage);
  assert.equal(node, 'node');
  const port = await freePort();
  const proc = spawn(process.execPath, args, {
    cwd: runtime.workdir,
    env: {
      PATH: process.env['PATH'] ?? '',
      HOME: dir,
      ...stageEnv(runtimeStage),
      PORT: String(port),
      DATA_DIR: join(dir, 'data'),
      BOOTSTRAP_ADMIN_API_KEY: TEST_ADMIN_KEY,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout.on('data', (d) => (out += d));
  proc.stderr.on('data', (d) => (out += d));
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  t.after(async () => {
    if (proc.exitCode === null) proc.kill('SIGTERM');
    await exited;
  });
  const deadline = Date.now() + 120_000;
  for (;;) {
    assert.equal(proc.exitCode, null, `the image's CMD exited:\n${out.slice(-3000)}`);
    const status = await fetch(`http://127.0.0.1:${port}/health`).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) break;
    assert.ok(Date.now() < deadline, `no /health 200 within 120 s:\n${out.slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
});
