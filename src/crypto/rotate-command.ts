import { pathToFileURL } from 'node:url';
import { loadConfig } from '../config.js';
import { createLogger } from '../log.js';
import { createStore } from '../store/index.js';
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
  const { keyring, source } = await loadKeyring(config);
  const store = await createStore({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR, poolMax: 2, log });
  try {
    const reports = await rotateSecrets(keyring, createRotationSources(store), {
      dryRun,
      onProgress: (r) => log.info({ ...r, failed: r.failed.length }, 'rotation source done'),
    });
    for (const r of reports) for (const f of r.failed) log.error({ source: r.source, row_id: f.row_id, reason: f.reason }, 'value could not be re-wrapped');
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
      console.error(`rotate-keys: ${err instanceof Error ? err.message : String(err)}`);
      process.exit(2);
    },
  );
}
