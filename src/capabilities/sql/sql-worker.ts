/**
 * The body of one SQL sandbox worker thread (see `sql-sandbox.ts`): it hosts its own sql.js
 * instance with SQLite's heap capped, runs one job at a time and answers with the result (and,
 * after `exec` or `create`, the database's new bytes, transferred rather than copied).
 */
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { AppError } from '../../errors.js';
import { limitEngineHeap, openDatabase } from './sqlite-engine.js';
import { transferableBytes, type SqlJob, type SqlJobReply, type SqlWorkerData } from './sql-jobs.js';

const port = parentPort!;
const { heapBytes, maxResultBytes } = workerData as SqlWorkerData;

async function run(job: SqlJob): Promise<{ reply: SqlJobReply; transfer: ArrayBuffer[] }> {
  const db = await openDatabase(job.op === 'create' ? null : job.bytes, { maxDatabaseBytes: job.op === 'exec' ? job.maxDatabaseBytes : undefined, maxResultBytes });
  try {
    switch (job.op) {
      case 'create':
      case 'exec': {
        const result = job.op === 'exec' ? db.exec(job.sql, job.params) : null;
        const bytes = transferableBytes(db.export());
        return { reply: { id: job.id, ok: true, result, bytes }, transfer: [bytes.buffer] };
      }
      case 'query':
        return { reply: { id: job.id, ok: true, result: db.query(job.sql, job.params, { limit: job.limit }) }, transfer: [] };
      case 'schema':
        return { reply: { id: job.id, ok: true, result: db.schema() }, transfer: [] };
    }
  } finally {
    db.close();
  }
}

/** Client errors keep their status and message; anything else is reported as an engine failure. */
function failure(id: number, err: unknown): SqlJobReply {
  if (err instanceof AppError && err.status < 500) return { id, ok: false, status: err.status, message: err.message };
  return { id, ok: false, status: 500, message: err instanceof Error ? err.message : String(err) };
}

/**
 * On Linux a thread has its own nice value: lowering this one's lets the event loop thread win
 * the CPU while a statement spins until its deadline. Best effort; elsewhere it stays as is.
 */
function lowerThreadPriority(): void {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, 10);
  } catch {
    // Not Linux, or not permitted: run at the process's priority.
  }
}

lowerThreadPriority();
await limitEngineHeap(heapBytes);
port.on('message', (job: SqlJob) => {
  run(job).then(
    ({ reply, transfer }) => port.postMessage(reply, transfer),
    (err: unknown) => port.postMessage(failure(job.id, err)),
  );
});
port.postMessage({ ready: true });
