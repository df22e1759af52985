/**
 * Runs `session_sql_database` SQL off the event loop. A small pool of worker threads each hosts
 * its own sql.js; a call ships the database bytes, SQL and params to an idle worker (buffers
 * transferred, not copied) and gets the result, plus the new bytes after `exec`, back.
 *
 * Bounds (docs/decisions/0032-sql-sandbox-off-thread.md):
 * - wall clock: a call still running after `timeoutMs` has its worker terminated and replaced;
 *   the caller gets a 422 and nothing is saved;
 * - memory: SQLite's heap is capped in every worker (`PRAGMA hard_heap_limit`), the worker's JS
 *   heap by `resourceLimits`, a query's rows by `maxResultBytes`, the file by `max_page_count`;
 * - fair share (`offthread/fair-share.ts`): an organisation runs on at most `workersPerOrg`
 *   workers at once and has at most `queueMaxPerOrg` calls waiting or running, one session
 *   `queueMaxPerKey` (429 with Retry-After beyond); calls wait their organisation's turn, so a
 *   tenant with a backlog of runaway statements does not delay another's; at most `queueMax`
 *   calls wait in all (503 beyond).
 */
import { PayloadTooLargeError, ServiceUnavailableError, TooManyRequestsError, UnprocessableError } from '../../errors.js';
import type { SqlExecResult, SqlQueryResult, SqlSchemaObject, SqlValue } from '../storage-ports.js';
import { createDeadlinePool, formatSeconds } from '../../offthread/index.js';
import type { PoolTenant } from '../../offthread/index.js';
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
  /** Calls of one organisation waiting or running (SQL_QUEUE_MAX_PER_ORG). */
  queueMaxPerOrg: number;
  /** Workers one organisation may occupy at once (SQL_WORKERS_PER_ORG); default: half of them, at least 1. */
  workersPerOrg?: number;
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
  queueMaxPerOrg: 32,
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
  /** A new, empty database file. `tenant`: the session and its organisation, for their fair share. */
  create(tenant: PoolTenant): Promise<Uint8Array>;
  /** Runs `sql` on a copy of `bytes` (which are handed over: do not use them afterwards). */
  exec(
    tenant: PoolTenant,
    bytes: Uint8Array,
    sql: string,
    params: SqlValue[] | undefined,
    opts: { maxDatabaseBytes: number },
  ): Promise<{ result: SqlExecResult; bytes: Uint8Array }>;
  query(tenant: PoolTenant, bytes: Uint8Array, sql: string, params?: SqlValue[], opts?: { limit?: number }): Promise<SqlQueryResult>;
  schema(tenant: PoolTenant, bytes: Uint8Array): Promise<SqlSchemaObject[]>;
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
      maxRunningPerOrg: opts.workersPerOrg ?? Math.max(1, Math.floor(opts.workers / 2)),
      maxPerOrg: opts.queueMaxPerOrg,
      maxPerKey: opts.queueMaxPerKey,
    },
    {
      timeout: () => new SqlTimeoutError(opts.timeoutMs),
      memory: memoryError,
      busy: () => new ServiceUnavailableError('The SQL engine is busy; try again shortly'),
      tooMany: ({ reason, limit }) =>
        new TooManyRequestsError(
          Math.ceil(opts.timeoutMs / 1000),
          `Too many SQL statements at once for this ${reason === 'key' ? 'session' : 'organization'} (at most ${limit}); wait for one to finish`,
        ),
      closed: () => new ServiceUnavailableError('The SQL engine is shutting down'),
      failed: engineError,
    },
  );
  async function submit(tenant: PoolTenant, job: SqlJob): Promise<Extract<SqlJobReply, { ok: true }>> {
    if ('bytes' in job) job.bytes = transferableBytes(job.bytes);
    const reply = await pool.run<SqlJobReply>(job, 'bytes' in job ? [job.bytes.buffer as ArrayBuffer] : [], tenant);
    if (!reply.ok) throw replyError(reply);
    return reply;
  }

  return {
    async create(tenant) {
      return (await submit(tenant, { op: 'create' })).bytes!;
    },
    async exec(tenant, bytes, sql, params, { maxDatabaseBytes }) {
      const reply = await submit(tenant, { op: 'exec', bytes, sql, params, maxDatabaseBytes });
      return { result: reply.result as SqlExecResult, bytes: reply.bytes! };
    },
    async query(tenant, bytes, sql, params, opts) {
      return (await submit(tenant, { op: 'query', bytes, sql, params, limit: opts?.limit })).result as SqlQueryResult;
    },
    async schema(tenant, bytes) {
      return (await submit(tenant, { op: 'schema', bytes })).result as SqlSchemaObject[];
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
