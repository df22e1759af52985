import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { connect } from '@nats-io/transport-node';
import { startNatsServer } from '../helpers/nats-server.js';
import { ROOT } from '../helpers/service-process.js';

/**
 * The NATS password recipe of deploy/.env.example (issue 30 item 13). nats-server parses the value
 * of auth.conf's `$NATS_…_PASSWORD` as config, so the earlier recipe's bare `openssl rand -hex 24`
 * broke the server about one time in four: `0e6ea6da…` is a malformed number, `1234…` a number.
 * The recipe is run as written with an `openssl` that prints hex starting with digits, then as is;
 * a real nats-server with deploy/nats/auth.conf must start and let each user log in with its value.
 */

const AUTH_CONF = readFileSync(join(ROOT, 'deploy/nats/auth.conf'), 'utf8');
const USERS = { api: 'NATS_API_PASSWORD', worker: 'NATS_WORKER_PASSWORD', service: 'NATS_SERVICE_PASSWORD' } as const;

/** The shell command after `# Generate each:` above the NATS passwords in deploy/.env.example. */
function recipe(): string {
  const env = readFileSync(join(ROOT, 'deploy/.env.example'), 'utf8');
  const m = /# Generate each: (.+)\n(?:#.*\n)*NATS_API_PASSWORD=/.exec(env);
  assert.ok(m, 'deploy/.env.example has a recipe for the NATS passwords');
  return m[1]!;
}

/** Runs the recipe through bash; with `hex`, `openssl` is a script that prints it instead of random bytes. */
function generate(dir: string, hex?: string): string {
  const path = hex === undefined ? process.env['PATH'] : `${dir}:${process.env['PATH']}`;
  if (hex !== undefined) {
    writeFileSync(join(dir, 'openssl'), `#!/bin/sh\necho ${hex}\n`);
    chmodSync(join(dir, 'openssl'), 0o755);
  }
  return execFileSync('bash', ['-c', recipe()], { encoding: 'utf8', env: { ...process.env, PATH: path } }).trim();
}

/** Starts nats-server with the shipped auth.conf and these passwords; each user must log in with its own. */
async function assertLogins(t: { after(fn: () => unknown): void }, passwords: Record<keyof typeof USERS, string>): Promise<void> {
  const env = Object.fromEntries(Object.entries(USERS).map(([user, name]) => [name, passwords[user as keyof typeof USERS]]));
  const server = await startNatsServer({ t, secure: false, files: { 'auth.conf': AUTH_CONF }, config: 'include ./auth.conf', env });
  for (const [user, pass] of Object.entries(passwords)) {
    const nc = await connect({ servers: server.address, user, pass, reconnect: false });
    await nc.flush();
    await nc.close();
    // The value is the password, not something nats-server made of it.
    await assert.rejects(connect({ servers: server.address, user, pass: `${pass}x`, reconnect: false }), /Authorization/);
  }
}

test('the recipe gives passwords nats-server takes when the random hex starts with digits', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'nats-recipe-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const hex = {
    // A value of the report: read as a malformed float.
    api: '0e6ea6da5d2b7d9e5d0c4a1e8b3f2a6c7d8e9f0a1b2c3d4e',
    // Digits only: read as an integer (or out of range).
    worker: '123456789012345678901234567890123456789012345678',
    // An exponent: read as a number.
    service: '9e9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e',
  };
  const passwords = { api: generate(dir, hex.api), worker: generate(dir, hex.worker), service: generate(dir, hex.service) };
  for (const [user, value] of Object.entries(passwords)) assert.ok(value.includes(hex[user as keyof typeof hex]), value);
  await assertLogins(t, passwords);
});

test('the recipe with the real openssl: twelve generated passwords, every one accepted', async (t) => {
  for (let round = 0; round < 4; round++) {
    const passwords = { api: generate(''), worker: generate(''), service: generate('') };
    for (const value of Object.values(passwords)) assert.match(value, /^[A-Za-z][0-9A-Za-z]{40,}$/);
    await assertLogins(t, passwords);
  }
});
