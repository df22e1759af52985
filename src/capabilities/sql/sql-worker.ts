/**
 * The task handler of the SQL sandbox's worker threads (see `sql-sandbox.ts`): each thread hosts
 * its own sql.js instance with SQLite's heap capped, runs one job at a time and answers with the
 * result (and, after `exec` or `create`, the database's new bytes, transferred rather than copied).
 */
import { workerData } from 'node:worker_threads';
import { AppError } from '../../errors.js';
import { poolTask, transferring } from '../../offthread/pool-worker.js';
import { limitEngineHeap, openDatabase } from './sqlite-engine.js';
import { transferableBytes, type SqlJob, type SqlJobReply, type SqlWorkerData } from './sql-jobs.js';

const { heapBytes, maxResultBytes } = workerData as SqlWorkerData;

async function run(job: SqlJob): Promise<SqlJobReply> {
  const db = await openDatabase(job.op === 'create' ? null : job.bytes, {
    maxDatabaseBytes: job.op === 'exec' ? job.maxDatabaseBytes : undefined,
    maxResultBytes,
  });
  try {
    switch (job.op) {
      case 'create':
      case 'exec': {
        const result = job.op === 'exec' ? db.exec(job.sql, job.params) : null;
        const bytes = transferableBytes(db.export());
        return transferring({ ok: true, result, bytes }, bytes.buffer);
      }
      case 'query':
        return { ok: true, result: db.query(job.sql, job.params, { limit: job.limit }) };
      case 'schema':
        return { ok: true, result: db.schema() };
    }
  } finally {
    db.close();
  }
}

/** Client errors keep their status and message; anything else is reported as an engine failure. */
function failure(err: unknown): SqlJobReply {
  if (err instanceof AppError && err.status < 500) return { ok: false, status: err.status, message: err.message };
  return { ok: false, status: 500, message: err instanceof Error ? err.message : String(err) };
}

await limitEngineHeap(heapBytes);
export default poolTask((job: SqlJob) => run(job).catch(failure));
