import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Logger } from '../log.js';
import type { PgliteThreadData, PgliteThreadReply } from './pglite-thread-messages.js';

/** The port in the socket file's name; libpq-style clients find `<host>/.s.PGSQL.<port>`. */
const SOCKET_PORT = 5432;
/** sockaddr_un holds 108 bytes with the terminator; longer data-directory paths use a temp dir. */
const MAX_SOCKET_PATH = 100;
/** How long close() waits for PGlite's clean shutdown before terminating the thread. */
const DEFAULT_CLOSE_TIMEOUT_MS = 10_000;

export interface PgliteThreadOptions {
  /** PGlite's data directory. */
  dataDir: string;
  /** Directory for the unix socket (default: the parent of dataDir, or a temp dir when that path is too long). */
  socketDir: string;
  /** Connections the server accepts (the service's pool size). */
  maxConnections: number;
  log: Logger;
}

export interface PgliteThread {
  /** Connection settings for `pg`: a directory as host means a unix socket in it. */
  host: string;
  port: number;
  /** Stops the server and shuts PGlite down cleanly; then ends the thread. */
  close(): Promise<void>;
}

/**
 * Connections to the embedded database. Its server runs one statement at a time, so more
 * connections only let the next statement wait there instead of in the pool (no round trip
 * between two statements); a transaction holds the server until it ends either way.
 */
const EMBEDDED_POOL_MAX = 4;

export interface EmbeddedDatabase {
  thread: PgliteThread;
  /** The pool size to use: the service's, capped for the one-statement-at-a-time server. */
  connections: number;
}

/**
 * The service's embedded database: PGlite under `<DATA_DIR>/pglite`, its socket in DATA_DIR.
 * A module without the ORM, so src/main.ts can start it while the app's modules still load.
 */
export async function startEmbeddedDatabase({
  dataDir,
  poolMax,
  log,
}: {
  dataDir: string;
  poolMax: number;
  log: Logger;
}): Promise<EmbeddedDatabase> {
  const dir = resolve(dataDir, 'pglite');
  mkdirSync(dir, { recursive: true });
  const connections = Math.min(poolMax, EMBEDDED_POOL_MAX);
  const thread = await startPgliteThread({ dataDir: dir, socketDir: resolve(dataDir), maxConnections: connections, log });
  return { thread, connections };
}

/**
 * Starts the embedded database on its own worker thread (`pglite-worker.ts`) and resolves once
 * it accepts connections. A failure to open (a damaged data directory, say) rejects with the
 * worker's message and leaves no thread behind.
 */
export async function startPgliteThread({ dataDir, socketDir, maxConnections, log }: PgliteThreadOptions): Promise<PgliteThread> {
  const ownDir = join(resolve(socketDir), `.s.PGSQL.${SOCKET_PORT}`).length > MAX_SOCKET_PATH;
  const host = ownDir ? mkdtempSync(join(tmpdir(), 'pglite-')) : resolve(socketDir);
  const data: PgliteThreadData = { dataDir, socketPath: join(host, `.s.PGSQL.${SOCKET_PORT}`), maxConnections };
  const removeOwnDir = () => ownDir && rmSync(host, { recursive: true, force: true });
  if (!existsSync(join(dataDir, 'PG_VERSION'))) {
    try {
      await initialiseInOwnThread(data);
    } catch (err) {
      removeOwnDir();
      throw err;
    }
  }
  const worker = new Worker(WORKER_URL, { workerData: data, name: 'pglite' });
  let closing = false;
  worker.on('error', (err) => log.error({ component: 'store', err }, 'embedded database thread failed'));
  worker.on('exit', (code) => {
    if (!closing) log.error({ component: 'store', code }, 'embedded database thread exited');
  });
  const first = await nextReply(worker);
  if (first.type !== 'ready') {
    await worker.terminate();
    removeOwnDir();
    throw new Error(`cannot open the embedded database in ${dataDir}: ${'error' in first ? first.error : first.type}`);
  }
  return {
    host,
    port: SOCKET_PORT,
    async close() {
      closing = true;
      worker.postMessage({ type: 'close' });
      const timeout = AbortSignal.timeout(DEFAULT_CLOSE_TIMEOUT_MS);
      const reply = await nextReply(worker, timeout).catch((err: Error) => ({ type: 'closed' as const, error: err.message }));
      if ('error' in reply && reply.error) log.error({ component: 'store', error: reply.error }, 'embedded database did not close cleanly');
      await worker.terminate();
      removeOwnDir();
    },
  };
}

const WORKER_URL = new URL('./pglite-worker.js', import.meta.url);

/**
 * Creates the database files of an empty data directory in a thread of its own that ends
 * before the serving one starts. PGlite's initdb runs a second, in-memory PostgreSQL and the
 * initdb program beside the real one; in the serving thread their memory stayed in the
 * process's RSS for its whole life. A thread that ends returns part of it (idle RSS on an empty
 * directory 604–644 → 561–570 MB; bench/README.md, issue 15).
 */
async function initialiseInOwnThread(data: PgliteThreadData): Promise<void> {
  const worker = new Worker(WORKER_URL, { workerData: { ...data, initOnly: true }, name: 'pglite-initdb' });
  try {
    const reply = await nextReply(worker);
    if (reply.type !== 'closed' || reply.error)
      throw new Error(`cannot create the embedded database in ${data.dataDir}: ${'error' in reply ? reply.error : reply.type}`);
  } finally {
    await worker.terminate();
  }
}

/** The worker's next message; rejects when it dies first or `signal` aborts. */
function nextReply(worker: Worker, signal?: AbortSignal): Promise<PgliteThreadReply> {
  return new Promise((resolveReply, reject) => {
    const cleanup = () => {
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
      signal?.removeEventListener('abort', onAbort);
    };
    const onMessage = (m: PgliteThreadReply) => {
      cleanup();
      resolveReply(m);
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    const onExit = (code: number) => onError(new Error(`the thread exited with code ${code}`));
    const onAbort = () => onError(new Error('timed out'));
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
    signal?.addEventListener('abort', onAbort);
  });
}
