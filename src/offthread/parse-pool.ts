/**
 * Runs parsers fed by callers (agent definitions in YAML/Markdown/JSON, client tools' JSON
 * Schemas, fetched HTML) on a small pool of worker threads, so a hostile document costs a
 * worker its deadline instead of stalling every request of every tenant.
 *
 * Bounds: a job still running after `timeoutMs` (from the moment a worker takes it) has its
 * worker terminated and replaced, and fails with a `ParseLimitError`; so does a job whose
 * worker runs out of its `memoryMb` heap. Jobs wait their organisation's turn (fair share,
 * `fair-share.ts`): one organisation runs on at most `workersPerOrg` workers and has at most
 * `queueMaxPerOrg` jobs waiting or running, one caller (user or session) `queueMaxPerCaller`
 * (429 with Retry-After beyond); at most `queueMax` jobs wait in all (503 beyond).
 */
import { AppError, InvalidRequestError, LimitExceededError, ServiceUnavailableError, TooManyRequestsError } from '../errors.js';
import { createDeadlinePool, formatSeconds } from './deadline-pool.js';
import type { PoolTenant } from './fair-share.js';
import type { ParseJobInput, ParseJobReply, ParseResults } from './parse-jobs.js';

export interface ParsePoolOptions {
  /** Worker threads (PARSE_WORKERS). */
  workers: number;
  /** Wall-clock limit of one job, ms (PARSE_TIMEOUT_MS). */
  timeoutMs: number;
  /** JS heap of each worker, MB (PARSE_WORKER_MEMORY_MB). */
  memoryMb: number;
  /** Jobs waiting for a worker, all tenants together (PARSE_QUEUE_MAX). */
  queueMax: number;
  /** Jobs of one organisation waiting or running (PARSE_QUEUE_MAX_PER_ORG). */
  queueMaxPerOrg: number;
  /** Jobs of one caller, a user or a session, waiting or running (PARSE_QUEUE_MAX_PER_CALLER). */
  queueMaxPerCaller: number;
  /** Workers one organisation may occupy at once (PARSE_WORKERS_PER_ORG); default: half of them, at least 1. */
  workersPerOrg?: number;
}

export const DEFAULT_PARSE_POOL_OPTIONS: ParsePoolOptions = {
  workers: 2,
  timeoutMs: 5000,
  memoryMb: 256,
  queueMax: 64,
  queueMaxPerOrg: 16,
  queueMaxPerCaller: 4,
};

/** A job stopped for running past its deadline or out of memory; callers word it for their audience. */
export class ParseLimitError extends Error {
  readonly reason: 'timeout' | 'memory';
  constructor(reason: 'timeout' | 'memory', limit: string) {
    super(reason === 'timeout' ? `stopped after ${limit}` : `stopped at the ${limit} memory limit`);
    this.name = 'ParseLimitError';
    this.reason = reason;
  }
}

export interface ParsePool {
  /** Runs `job` in `tenant`'s fair share (without one: a share common to all such jobs). */
  run<K extends ParseJobInput['kind']>(job: Extract<ParseJobInput, { kind: K }>, tenant?: PoolTenant): Promise<ParseResults[K]>;
  /** Live figures, for tests and diagnostics. */
  stats(): { workers: number; busy: number; queued: number; replaced: number };
  /** Terminates the workers; waiting jobs fail with 503. */
  close(): Promise<void>;
}

/** Creates the pool; workers start on first use, and idle workers do not keep the process alive. */
export function createParsePool(options: Partial<ParsePoolOptions> = {}): ParsePool {
  const opts = { ...DEFAULT_PARSE_POOL_OPTIONS, ...options };
  const pool = createDeadlinePool(
    {
      ...opts,
      worker: new URL('./parse-worker.js', import.meta.url),
      resourceLimits: { maxOldGenerationSizeMb: opts.memoryMb, maxYoungGenerationSizeMb: 16 },
      maxRunningPerOrg: opts.workersPerOrg ?? Math.max(1, Math.floor(opts.workers / 2)),
      maxPerOrg: opts.queueMaxPerOrg,
      maxPerKey: opts.queueMaxPerCaller,
    },
    {
      timeout: () => new ParseLimitError('timeout', formatSeconds(opts.timeoutMs)),
      memory: () => new ParseLimitError('memory', `${opts.memoryMb} MB`),
      busy: () => new ServiceUnavailableError('The document parser is busy; try again shortly'),
      tooMany: ({ reason, limit }) =>
        new TooManyRequestsError(
          Math.ceil(opts.timeoutMs / 1000),
          `Too many documents being checked at once for this ${reason === 'key' ? 'caller' : 'organization'} (at most ${limit}); retry after one finished`,
        ),
      closed: () => new ServiceUnavailableError('The service is shutting down'),
      failed: (message) => new Error(`parse worker failed: ${message}`),
    },
  );
  return {
    async run(job, tenant) {
      const reply = await pool.run<ParseJobReply>(job, [], tenant);
      if (reply.ok) return reply.value as never;
      throw replyError(reply);
    },
    stats: pool.stats,
    close: pool.close,
  };
}

/** The worker's 4xx as the same error class the inline parser throws; anything else is a failure. */
function replyError(reply: Extract<ParseJobReply, { ok: false }>): Error {
  if (reply.status >= 500) return new Error(`parse worker failed: ${reply.message}`);
  if (reply.code === 'limit_exceeded') return new LimitExceededError(reply.message);
  if (reply.status === 400) return new InvalidRequestError(reply.message);
  return new AppError(reply.status, reply.code, reply.message);
}
