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
import { Worker } from 'node:worker_threads';
import { PayloadTooLargeError, ServiceUnavailableError, TooManyRequestsError, UnprocessableError } from '../../errors.js';
import type { SqlExecResult, SqlQueryResult, SqlSchemaObject, SqlValue } from '../storage-ports.js';
import { transferableBytes, type SqlJob, type SqlJobInput, type SqlJobReply, type SqlWorkerData } from './sql-jobs.js';

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
  exec(key: string, bytes: Uint8Array, sql: string, params: SqlValue[] | undefined, opts: { maxDatabaseBytes: number }): Promise<{ result: SqlExecResult; bytes: Uint8Array }>;
  query(key: string, bytes: Uint8Array, sql: string, params?: SqlValue[], opts?: { limit?: number }): Promise<SqlQueryResult>;
  schema(key: string, bytes: Uint8Array): Promise<SqlSchemaObject[]>;
  /** Live figures, for tests and diagnostics. */
  stats(): { workers: number; busy: number; queued: number; replaced: number };
  /** Terminates the workers; waiting calls fail with 503. */
  close(): Promise<void>;
}

interface Pending {
  key: string;
  job: SqlJobInput;
  resolve(reply: Extract<SqlJobReply, { ok: true }>): void;
  reject(err: Error): void;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  current?: { id: number; call: Pending; timer: NodeJS.Timeout };
}

const WORKER_URL = new URL('./sql-worker.js', import.meta.url);

/** Creates the pool; workers start on first use, and idle workers do not keep the process alive. */
export function createSqlSandbox(options: Partial<SqlSandboxOptions> = {}): SqlSandbox {
  const opts = { ...DEFAULT_SQL_SANDBOX_OPTIONS, ...options };
  const workerData: SqlWorkerData = { heapBytes: opts.memoryBytes, maxResultBytes: opts.maxResultBytes };
  // The JS heap holds the rows of one result (UTF-16 strings) and their structured-clone copy.
  const heapMb = opts.workerHeapMb ?? Math.ceil((opts.memoryBytes + 4 * opts.maxResultBytes) / (1024 * 1024)) + 64;
  const slots = new Set<Slot>();
  const queue: Pending[] = [];
  const perKey = new Map<string, number>();
  let nextId = 1;
  let replaced = 0;
  let closed = false;

  function spawn(): void {
    const worker = new Worker(WORKER_URL, { workerData, resourceLimits: { maxOldGenerationSizeMb: heapMb, maxYoungGenerationSizeMb: 16 } });
    const slot: Slot = { worker, ready: false };
    slots.add(slot);
    worker.on('message', (msg: SqlJobReply | { ready: true }) => {
      if ('ready' in msg) {
        // A starting worker holds the process (calls may wait for it); an idle one does not.
        slot.ready = true;
        worker.unref();
      } else if (slot.current?.id === msg.id) {
        const { call, timer } = slot.current;
        clearTimeout(timer);
        slot.current = undefined;
        worker.unref();
        settle(call, msg);
        // After an engine failure the worker's SQLite state is suspect: start a fresh one.
        if (!msg.ok && msg.status >= 500) return retire(slot, engineError(msg.message));
      }
      dispatch();
    });
    // A worker that dies (its JS heap past resourceLimits, or a crash) fails its call and is replaced.
    worker.on('error', (err: Error & { code?: string }) => retire(slot, err.code === 'ERR_WORKER_OUT_OF_MEMORY' ? memoryError() : engineError(err.message)));
    worker.on('exit', () => retire(slot, engineError('the SQL worker stopped')));
  }

  /** Takes a slot out of the pool, fails its call, and starts a replacement if still needed. */
  function retire(slot: Slot, err: Error): void {
    if (!slots.delete(slot)) return;
    if (slot.current) {
      clearTimeout(slot.current.timer);
      finish(slot.current.call);
      slot.current.call.reject(err);
      slot.current = undefined;
    }
    void slot.worker.terminate();
    if (closed) return;
    if (!slot.ready) {
      // It never started (a broken installation): fail what waits rather than respawn in a loop.
      for (const call of queue.splice(0)) {
        finish(call);
        call.reject(err);
      }
      return;
    }
    replaced++;
    spawn();
    dispatch();
  }

  function dispatch(): void {
    if (closed) return;
    while (queue.length > 0 && slots.size < opts.workers) spawn();
    for (const slot of slots) {
      if (queue.length === 0) return;
      if (!slot.ready || slot.current) continue;
      const call = queue.shift()!;
      const id = nextId++;
      const job = { ...call.job, id } as SqlJob;
      const timer = setTimeout(() => retire(slot, new SqlTimeoutError(opts.timeoutMs)), opts.timeoutMs);
      slot.current = { id, call, timer };
      slot.worker.ref();
      slot.worker.postMessage(job, 'bytes' in job ? [job.bytes.buffer as ArrayBuffer] : []);
    }
  }

  function settle(call: Pending, reply: SqlJobReply): void {
    finish(call);
    if (reply.ok) call.resolve(reply);
    else call.reject(replyError(reply));
  }

  function finish(call: Pending): void {
    const left = (perKey.get(call.key) ?? 1) - 1;
    if (left > 0) perKey.set(call.key, left);
    else perKey.delete(call.key);
  }

  function submit(key: string, job: SqlJobInput): Promise<Extract<SqlJobReply, { ok: true }>> {
    if (closed) return Promise.reject(new ServiceUnavailableError('The SQL engine is shutting down'));
    if ((perKey.get(key) ?? 0) >= opts.queueMaxPerKey) {
      return Promise.reject(new TooManyRequestsError(1, `Too many SQL statements at once for this session (at most ${opts.queueMaxPerKey}); wait for one to finish`));
    }
    if (queue.length >= opts.queueMax) return Promise.reject(new ServiceUnavailableError('The SQL engine is busy; try again shortly'));
    if ('bytes' in job) job.bytes = transferableBytes(job.bytes);
    perKey.set(key, (perKey.get(key) ?? 0) + 1);
    return new Promise((resolve, reject) => {
      queue.push({ key, job, resolve, reject });
      dispatch();
    });
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
    stats: () => ({
      workers: slots.size,
      busy: [...slots].filter((s) => s.current).length,
      queued: queue.length,
      replaced,
    }),
    async close() {
      closed = true;
      for (const call of queue.splice(0)) {
        finish(call);
        call.reject(new ServiceUnavailableError('The SQL engine is shutting down'));
      }
      const all = [...slots];
      slots.clear();
      for (const slot of all) {
        if (slot.current) {
          clearTimeout(slot.current.timer);
          finish(slot.current.call);
          slot.current.call.reject(new ServiceUnavailableError('The SQL engine is shutting down'));
        }
      }
      await Promise.all(all.map((s) => s.worker.terminate()));
    },
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

/** 5000 → "5 s", 250 → "0.25 s". */
export function formatSeconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(3))} s`;
}
