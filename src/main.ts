import { enableCompileCache } from 'node:module';
import { resolve } from 'node:path';
import {
  acquireDataDirLock,
  DataDirLockedError,
  DEFAULT_DATA_DIR,
  liveHolder,
  type DataDirLock,
  type LockHolder,
} from './db/data-dir-lock.js';
import type { EmbeddedDatabase } from './db/pglite-thread.js';
import { createStartPhases } from './start-phases.js';

// From the process's start to here: Node's own start and this module's static imports.
const phases = createStartPhases();
phases.record('node', performance.now());

// V8's code cache on disk for every module loaded from here on: a restart skips compiling
// the service's and its dependencies' modules again (issue 13 item 7, start-up time). Hence
// the dynamic imports below; static ones would load before this line runs.
enableCompileCache();

/** Process entry point: configuration, the app, and signal handling. */
async function main(): Promise<void> {
  refuseIfDataDirHeld(process.env);
  const config = await phases.time('config', async () => {
    const { ConfigError, loadConfig } = await import('./config.js');
    try {
      return loadConfig();
    } catch (err) {
      if (err instanceof ConfigError) {
        process.stderr.write(err.message + '\n');
        process.exit(2);
      }
      throw err;
    }
  });
  // The HTTP port first: a port in use must stop the start before the first admin is created and
  // its key printed (port-hold.ts); the app's `listen` phase takes the port over.
  if (config.PORT > 0) {
    const { holdPort } = await import('./http/port-hold.js');
    try {
      const hold = await holdPort(config.HOST, config.PORT);
      phases.beforePhase('listen', () => hold.release());
    } catch (err) {
      process.stderr.write(`fatal: ${(err as Error).message}\n`);
      process.exit(1);
    }
  }
  // Embedded mode: take the DATA_DIR lock before loading the app (seconds of imports), so a
  // second start on the same directory is refused at once, naming the holder.
  let dataDirLock: DataDirLock | undefined;
  if (config.mode === 'embedded') {
    try {
      dataDirLock = await phases.time('data-dir-lock', () =>
        acquireDataDirLock(config.DATA_DIR, { holder: 'service', host: config.HOST, port: config.PORT, action: 'cannot start' }),
      );
    } catch (err) {
      if (err instanceof DataDirLockedError) {
        process.stderr.write(`fatal: ${err.message}\n`);
        process.exit(3);
      }
      throw err;
    }
  }
  const { createLogger } = await import('./log.js');
  const log = createLogger(config.LOG_LEVEL);
  // Embedded mode: PGlite starts on its own thread (seconds of WASM start-up) while this thread
  // loads the app's modules, instead of after them (issue 13 item 7).
  let embeddedDatabase: Promise<EmbeddedDatabase> | undefined;
  if (config.mode === 'embedded') {
    const { startEmbeddedDatabase } = await import('./db/pglite-thread.js');
    embeddedDatabase = startEmbeddedDatabase({ dataDir: config.DATA_DIR, poolMax: config.DATABASE_POOL_MAX, log });
    // Awaited by the store; a failure before that point is reported there, not as unhandled.
    embeddedDatabase.catch(() => {});
  }
  const { createApp } = await phases.time('modules', () => import('./app.js'));
  const app = await createApp(config, { dataDirLock, startPhases: phases, log, embeddedDatabase });
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down');
    const hardStop = setTimeout(() => process.exit(1), config.SHUTDOWN_TIMEOUT_MS + 5000).unref();
    app.close().then(() => {
      clearTimeout(hardStop);
      process.exit(0);
    });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

/**
 * Embedded mode only: a look at DATA_DIR's lock before anything heavy is loaded (the config
 * schema and the app take seconds to import on a busy host), so a second start on a directory
 * in use stops at once. The one read of process.env outside src/config.ts, of the three raw
 * values that decide the mode and the directory; the lock itself is taken after validation.
 */
function refuseIfDataDirHeld(env: NodeJS.ProcessEnv): void {
  const set = (v: string | undefined) => v !== undefined && v !== '';
  if (set(env['DATABASE_URL']) || set(env['NATS_URL'])) return;
  const dataDir = set(env['DATA_DIR']) ? env['DATA_DIR']! : DEFAULT_DATA_DIR;
  let holder: LockHolder | undefined;
  try {
    holder = liveHolder(dataDir);
  } catch {
    return; // unreadable here: the real acquisition after validation reports it
  }
  if (!holder) return;
  process.stderr.write(`fatal: ${new DataDirLockedError(resolve(dataDir), holder, 'cannot start').message}\n`);
  process.exit(3);
}

main().catch((err: unknown) => {
  process.stderr.write(`fatal: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
