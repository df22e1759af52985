import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from './helpers.js';

const BIN = join(REPO_ROOT, 'packages', 'cli', 'dist', 'bin.js');

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI with the service's URL and key in its environment (no login config). */
export function runCli(url: string, key: string, args: string[]): Promise<CliRun> {
  const env: NodeJS.ProcessEnv = { ...process.env, AGENT_SESSION_URL: url, AGENT_SESSION_KEY: key, NO_COLOR: '1' };
  delete env['AGENT_SESSION_CONFIG'];
  const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

export const cliOk = (r: CliRun) => assert.equal(r.code, 0, `exit ${r.code}: ${r.stderr}`);
