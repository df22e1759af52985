/**
 * The embedded database's own thread (see `pglite-thread.ts`): opens PGlite on the data
 * directory and serves it over the PostgreSQL wire protocol on a unix socket, so the service
 * talks to it with the same driver as to a PostgreSQL server while PGlite's WebAssembly, its
 * emulated file system and its result encoding run here instead of on the request thread.
 */
import { chmodSync, rmSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { oneSequenceAtATime } from './pglite-sequences.js';
import type { PgliteThreadData, PgliteThreadReply, PgliteThreadRequest } from './pglite-thread-messages.js';

if (!parentPort) throw new Error('pglite-worker runs only as a worker thread');
const port = parentPort;
const { dataDir, socketPath, maxConnections, initOnly } = workerData as PgliteThreadData;

const reply = (message: PgliteThreadReply) => port.postMessage(message);

async function open(): Promise<{ db: PGlite; server: PGLiteSocketServer }> {
  const db = await PGlite.create({ dataDir });
  // The data-directory lock makes this process the only one here, so a socket file left by a
  // killed predecessor is stale, and listen() would fail on it with EADDRINUSE.
  rmSync(socketPath, { force: true });
  // Prepared statements' Parse … Sync sequences run whole, one connection's at a time (pglite-sequences.ts).
  const server = new PGLiteSocketServer({ db: oneSequenceAtATime(db), path: socketPath, maxConnections });
  try {
    await server.start();
    // The server has no authentication: only this user may connect.
    chmodSync(socketPath, 0o600);
  } catch (err) {
    await server.stop();
    await db.close();
    throw err;
  }
  return { db, server };
}

async function close({ db, server }: { db: PGlite; server: PGLiteSocketServer }): Promise<void> {
  await server.stop();
  // close() shuts PostgreSQL down cleanly (a checkpoint): the next open needs no recovery.
  await db.close();
  rmSync(socketPath, { force: true });
}

/** Creates the database files on an empty data directory; the thread then ends (see pglite-thread.ts). */
async function initialise(): Promise<void> {
  const db = await PGlite.create({ dataDir });
  await db.close();
}

try {
  if (initOnly) {
    await initialise();
    reply({ type: 'closed' });
  } else await serve();
} catch (err) {
  reply({ type: 'failed', error: (err as Error).message });
}

async function serve(): Promise<void> {
  const opened = await open();
  port.on('message', (message: PgliteThreadRequest) => {
    if (message.type !== 'close') return;
    close(opened).then(
      () => reply({ type: 'closed' }),
      (err: Error) => reply({ type: 'closed', error: err.message }),
    );
  });
  reply({ type: 'ready' });
}
