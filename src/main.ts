import { createApp } from './app.js';
import { type Config, ConfigError, loadConfig } from './config.js';

/** Process entry point: configuration, the app, and signal handling. */
async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(err.message + '\n');
      process.exit(2);
    }
    throw err;
  }
  const app = await createApp(config);
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

main().catch((err: unknown) => {
  process.stderr.write(`fatal: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
