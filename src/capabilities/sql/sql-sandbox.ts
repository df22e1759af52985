/**
 * Runs `session_sql_database` SQL off the event loop. A small pool of worker threads each hosts
 * its own sql.js; a call ships the database bytes, SQL and params to an idle worker (buffers
 * transferred, not copied) and gets the result, plus the new bytes after `exec`, back.
 *
 * Bounds (docs/decisions.md, "SQL sandbox"):
 * - wall clock: a call still running after `timeoutMs` has its worker terminated and replaced;
 *   the caller gets a 422 and nothing is saved;
 * - memory: SQLite's heap is capped in every worker (`PRAGMA hard_heap_limit`), the worker's JS
 *   heap by `resourceLimits`, a query's rows by `maxResultBytes`, the file by `max_page_count`;
 * - queue: at most `queueMax` calls wait for a worker (503 beyond), and one key (a session) may
 *   have at most `queueMaxPerKey` calls waiting or running (429 beyond).
 */
import { PayloadTooLargeError, ServiceUnavailableError, TooManyRequestsError, UnprocessableError } from '../../errors.js';
import type { SqlExecResult, SqlQueryResult, SqlSchemaObject, SqlValue } from '../storage-ports.js';
import { createDeadlinePool, formatSeconds } from '../../offthread/deadline-pool.js';
import { transferableBytes, type SqlJob, type SqlJobReply, type SqlWorkerData } from './sql-jobs.js';

export interface SqlSandboxOptions {
  /** Worker threads (SQL_WORKERS). */
  workers: number;
  /** Wall-clock limit of one call, from the moment a worker takes it (SQL_STATEMENT_TIMEOUT_MS). */
  timeoutMs: number;
  /** SQLite's heap per worker (SQL_MEMORY_LIMIT_MB). */
  memoryBytes: number;
  /** Calls waiting for a worker, all sessions together (SQL_QUEUE_MAX). */
  queueMax: number;
  /** Calls of one session waiting or running (SQL_QUEUE_MAX_PER_SESSION). */
  queueMaxPerKey: number;
  /** Largest total size of one query's rows. */
  maxResultBytes: number;
  /** The worker's JS heap in MiB; default: room for the SQLite heap and four results. */
  workerHeapMb?: number;
}

export const DEFAULT_SQL_SANDBOX_OPTIONS: SqlSandboxOptions = {
  workers: 2,
  timeoutMs: 5000,
  memoryBytes: 64 * 1024 * 1024,
  queueMax: 100,
  queueMaxPerKey: 8,
  maxResultBytes: 16 * 1024 * 1024,
};

/** A call that ran past the deadline; its worker was terminated. */
export class SqlTimeoutError extends UnprocessableError {
  constructor(timeoutMs: number) {
    super(`SQL error: the statement exceeded the ${formatSeconds(timeoutMs)} limit and was stopped; nothing was saved`);
    this.name = 'SqlTimeoutError';
  }
}

export interface SqlSandbox {
  /** A new, empty database file. */
  create(key: string): Promise<Uint8Array>;
  /** Runs `sql` on a copy of `bytes` (which are handed over: do not use them afterwards). */
  exec(
    key: string,
    bytes: Uint8Array,
    sql: string,
    params: SqlValue[] | undefined,
    opts: { maxDatabaseBytes: number },
  ): Promise<{ result: SqlExecResult; bytes: Uint8Array }>;
  query(key: string, bytes: Uint8Array, sql: string, params?: SqlValue[], opts?: { limit?: number }): Promise<SqlQueryResult>;
  schema(key: string, bytes: Uint8Array): Promise<SqlSchemaObject[]>;
  /** Live figures, for tests and diagnostics. */
  stats(): { workers: number; busy: number; queued: number; replaced: number };
  /** Terminates the workers; waiting calls fail with 503. */
  close(): Promise<void>;
}

/** Creates the pool; workers start on first use, and idle workers do not keep the process alive. */
export function createSqlSandbox(options: Partial<SqlSandboxOptions> = {}): SqlSandbox {
  const opts = { ...DEFAULT_SQL_SANDBOX_OPTIONS, ...options };
  const workerData: SqlWorkerData = { heapBytes: opts.memoryBytes, maxResultBytes: opts.maxResultBytes };
  // The JS heap holds the rows of one result (UTF-16 strings) and their structured-clone copy.
  const heapMb = opts.workerHeapMb ?? Math.ceil((opts.memoryBytes + 4 * opts.maxResultBytes) / (1024 * 1024)) + 64;
  const pool = createDeadlinePool(
    {
      ...opts,
      worker: new URL('./sql-worker.js', import.meta.url),
      workerData,
      resourceLimits: { maxOldGenerationSizeMb: heapMb, maxYoungGenerationSizeMb: 16 },
    },
    {
      timeout: () => new SqlTimeoutError(opts.timeoutMs),
      memory: memoryError,
      busy: () => new ServiceUnavailableError('The SQL engine is busy; try again shortly'),
      closed: () => new ServiceUnavailableError('The SQL engine is shutting down'),
      failed: engineError,
    },
  );
  /** Calls waiting or running, per key. */
  const perKey = new Map<string, number>();

  async function submit(key: string, job: SqlJob): Promise<Extract<SqlJobReply, { ok: true }>> {
    const count = perKey.get(key) ?? 0;
    if (count >= opts.queueMaxPerKey)
      throw new TooManyRequestsError(
        1,
        `Too many SQL statements at once for this session (at most ${opts.queueMaxPerKey}); wait for one to finish`,
      );
    if ('bytes' in job) job.bytes = transferableBytes(job.bytes);
    perKey.set(key, count + 1);
    try {
      const reply = await pool.run<SqlJobReply>(job, 'bytes' in job ? [job.bytes.buffer as ArrayBuffer] : []);
      if (!reply.ok) throw replyError(reply);
      return reply;
    } finally {
      const left = (perKey.get(key) ?? 1) - 1;
      if (left > 0) perKey.set(key, left);
      else perKey.delete(key);
    }
  }

  return {
    async create(key) {
      return (await submit(key, { op: 'create' })).bytes!;
    },
    async exec(key, bytes, sql, params, { maxDatabaseBytes }) {
      const reply = await submit(key, { op: 'exec', bytes, sql, params, maxDatabaseBytes });
      return { result: reply.result as SqlExecResult, bytes: reply.bytes! };
    },
    async query(key, bytes, sql, params, opts) {
      return (await submit(key, { op: 'query', bytes, sql, params, limit: opts?.limit })).result as SqlQueryResult;
    },
    async schema(key, bytes) {
      return (await submit(key, { op: 'schema', bytes })).result as SqlSchemaObject[];
    },
    stats: pool.stats,
    close: pool.close,
  };
}

function replyError(reply: Extract<SqlJobReply, { ok: false }>): Error {
  if (reply.status === 413) return new PayloadTooLargeError(reply.message);
  if (reply.status === 422) return new UnprocessableError(reply.message);
  return engineError(reply.message);
}

function memoryError(): PayloadTooLargeError {
  return new PayloadTooLargeError('SQL error: the statement exceeded the memory limit and was stopped; nothing was saved');
}

/** Not the caller's fault: logged by the caller's error path, shown as a generic failure. */
function engineError(message: string): Error {
  return new Error(`SQL engine failure: ${message}`);
}
