import { pathToFileURL } from 'node:url';
import { loadConfig, type Config } from '../config.js';
import { createLogger, type Logger } from '../log.js';
import { acquireDataDirLock, DataDirLockedError } from '../db/data-dir-lock.js';
import { createStore } from '../db/index.js';
import { loadKeyring } from './load-keyring.js';
import { createRotationSources } from './rotation-sources.js';
import { rotateSecrets } from './rotation.js';

/**
 * `npm run rotate-keys [-- --dry-run]`: re-wraps every sealed value with the current key.
 * Rotation: set the new key as SECRETS_ENCRYPTION_KEY and the old one as
 * SECRETS_ENCRYPTION_KEY_PREVIOUS on every instance, run this once, then drop the previous
 * key. Returns the exit code: 0 when every row is under the current key, 1 otherwise.
 */
export async function runRotateCommand(argv: readonly string[]): Promise<number> {
  const dryRun = argv.includes('--dry-run');
  const config = loadConfig();
  const log = createLogger(config.LOG_LEVEL);
  // Embedded mode: PGlite has one writer. Rotating under a running service would write rows the
  // service never sees (and it would overwrite them), so refuse while DATA_DIR is held; the lock
  // also keeps the service from starting while the rotation runs. PostgreSQL needs no such lock.
  const lock =
    config.mode === 'embedded'
      ? await acquireDataDirLock(config.DATA_DIR, { holder: 'rotate-keys', action: 'rotate-keys refused' })
      : undefined;
  try {
    return await rotate(config, log, dryRun);
  } finally {
    lock?.release();
  }
}

async function rotate(config: Config, log: Logger, dryRun: boolean): Promise<number> {
  const { keyring, source } = await loadKeyring(config);
  const store = await createStore({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR, poolMax: 2, log });
  try {
    const reports = await rotateSecrets(keyring, createRotationSources(store), {
      dryRun,
      onProgress: (r) => log.info({ ...r, failed: r.failed.length }, 'rotation source done'),
    });
    for (const r of reports)
      for (const f of r.failed) log.error({ source: r.source, row_id: f.row_id, reason: f.reason }, 'value could not be re-wrapped');
    const failed = reports.reduce((n, r) => n + r.failed.length, 0);
    log.info({ kid: keyring.current.kid, key_source: source, dryRun, sources: reports.length, failed }, 'key rotation finished');
    return failed ? 1 : 0;
  } finally {
    await store.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runRotateCommand(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: unknown) => {
      if (err instanceof DataDirLockedError) {
        console.error(err.message);
        process.exit(3);
      }
      console.error(`rotate-keys: ${err instanceof Error ? err.message : String(err)}`);
      process.exit(2);
    },
  );
}
