import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { startEmbeddedDatabase } from '../../src/db/pglite-thread.js';
import { createLogger } from '../../src/log.js';
import { ROOT } from './service-process.js';

/**
 * An embedded database directory as the service leaves it after creating it on an empty
 * DATA_DIR, made once per PGlite version (under .cache/) and copied into each embedded-mode test
 * app's DATA_DIR. Creating one runs PostgreSQL's initdb in WebAssembly: about 6 s of CPU of the
 * 8 s an embedded app start took, and dozens of tests start one. The service opens a copy as a
 * directory it made itself (src/db/pglite-thread.ts creates one only where PG_VERSION is
 * missing) and migrates it as usual; the creation itself stays covered by the tests that start
 * the service on an empty DATA_DIR as a process (test/main.test.ts, test/db/pglite-thread.test.ts,
 * test/ops/).
 */
export async function seedEmbeddedDataDir(dataDir: string): Promise<void> {
  const target = join(dataDir, 'pglite');
  if (existsSync(join(target, 'PG_VERSION'))) return;
  cpSync(await template(), target, { recursive: true });
}

let made: Promise<string> | undefined;

function template(): Promise<string> {
  made ??= makeTemplate();
  return made;
}

async function makeTemplate(): Promise<string> {
  const { version } = JSON.parse(readFileSync(join(ROOT, 'node_modules/@electric-sql/pglite/package.json'), 'utf8')) as { version: string };
  const dir = join(ROOT, '.cache', `pglite-data-${version}`);
  if (existsSync(join(dir, 'PG_VERSION'))) return dir;
  // Made aside and renamed into place: a test file running at the same time sees all of it or none.
  const aside = `${dir}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  mkdirSync(aside, { recursive: true });
  try {
    const db = await startEmbeddedDatabase({ dataDir: aside, poolMax: 1, log: createLogger('silent') });
    await db.thread.close();
    try {
      renameSync(join(aside, 'pglite'), dir);
    } catch (err) {
      if (!existsSync(join(dir, 'PG_VERSION'))) throw err; // else another test file made it first
    }
  } finally {
    rmSync(aside, { recursive: true, force: true });
  }
  return dir;
}
