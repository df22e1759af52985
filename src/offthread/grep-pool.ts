/**
 * Compiles and matches tenants' grep patterns and globs on a small pool of worker threads, so
 * that however costly a search is, it costs a worker its time, not the event loop's.
 *
 * Bounds: a pattern compiling to more than MAX_PROGRAM_SIZE instructions is a 400 "Pattern too
 * complex" before any matching (so is one whose compiling runs past the deadline or out of the
 * worker's memory). One search (every batch of one request, compiling included) may spend
 * `timeoutMs` of worker time; past it, a 422 `GrepTimeoutError`. At most `queueMax` jobs wait (503 beyond).
 */
import { AppError, InvalidRequestError, ServiceUnavailableError, TooManyRequestsError, UnprocessableError } from '../errors.js';
import { createDeadlinePool, formatSeconds } from './deadline-pool.js';
import type { GrepJob, GrepJobReply, GrepMatcherSpec } from './grep-jobs.js';
import type { PoolTenant } from './fair-share.js';

/** Searches of one session waiting or running at once; beyond, 429. */
const GREP_JOBS_PER_SESSION = 4;

export type { GrepMatcherSpec } from './grep-jobs.js';

export interface GrepPoolOptions {
  /** Worker threads (GREP_WORKERS). */
  workers: number;
  /** Worker time one search may spend, ms (GREP_TIMEOUT_MS). */
  timeoutMs: number;
  /** Jobs waiting for a worker (GREP_QUEUE_MAX). */
  queueMax: number;
}

export const DEFAULT_GREP_POOL_OPTIONS: GrepPoolOptions = { workers: 2, timeoutMs: 5000, queueMax: 64 };

/**
 * A job stops itself once its budget is spent, one text's work later (half a second at most on an
 * idle core); the pool ends a worker only this much later, for compiling, which cannot stop
 * itself: up to seconds for the largest program RE2 accepts, before it is refused as too large.
 * Ending a worker costs a new one's start, so the margin is wide enough for a loaded machine.
 */
const HARD_DEADLINE_GRACE_MS = 5000;
/** A compiled program of MAX_PROGRAM_SIZE needs little; only an oversized one is refused by running out. */
const WORKER_MEMORY_MB = 128;

/** 422: the search spent its time limit (the SQL statement timeout's status). */
export class GrepTimeoutError extends UnprocessableError {
  constructor(limitMs: number) {
    super(`Search stopped after its time limit of ${formatSeconds(limitMs)}; narrow it with path or path_pattern, or simplify the pattern`);
    this.name = 'GrepTimeoutError';
  }
}

/** The matcher of one search: each call matches a batch of texts on a worker, out of the search's budget. */
export interface TextMatcher {
  /** Indexes of the texts that match, at most `max` of them. */
  match(texts: string[], max?: number): Promise<number[]>;
}

export interface GrepSearch {
  /** Compiles `spec` on a worker: a 400 if it is invalid or too complex. */
  compile(spec: GrepMatcherSpec): Promise<TextMatcher>;
}

export interface GrepPool {
  /** A search for `tenant` (its organisation and session): its matchers share one budget of `timeoutMs` of worker time. */
  search(tenant: PoolTenant): GrepSearch;
  /** Live figures, for tests and diagnostics. */
  stats(): { workers: number; busy: number; queued: number; replaced: number };
  close(): Promise<void>;
}

class JobStopped extends Error {
  constructor(readonly reason: 'timeout' | 'memory') {
    super(`grep job stopped: ${reason}`);
  }
}

/** Creates the pool; workers start on first use, and idle workers do not keep the process alive. */
export function createGrepPool(options: Partial<GrepPoolOptions> = {}): GrepPool {
  const opts = { ...DEFAULT_GREP_POOL_OPTIONS, ...options };
  const pool = createDeadlinePool(
    {
      workers: opts.workers,
      queueMax: opts.queueMax,
      timeoutMs: opts.timeoutMs + HARD_DEADLINE_GRACE_MS,
      worker: new URL('./grep-worker.js', import.meta.url),
      resourceLimits: { maxOldGenerationSizeMb: WORKER_MEMORY_MB, maxYoungGenerationSizeMb: 16 },
      // Fair share, as the SQL and parse pools (fair-share.ts): one organisation's searches take at
      // most half the workers and a bounded part of the queue, one session's fewer still.
      maxRunningPerOrg: Math.max(1, Math.floor(opts.workers / 2)),
      maxPerOrg: Math.max(1, Math.floor(opts.queueMax / 4)),
      maxPerKey: GREP_JOBS_PER_SESSION,
    },
    {
      timeout: () => new JobStopped('timeout'),
      memory: () => new JobStopped('memory'),
      busy: () => new ServiceUnavailableError('The search workers are busy; try again shortly'),
      tooMany: ({ reason, limit }) =>
        new TooManyRequestsError(
          Math.ceil(opts.timeoutMs / 1000),
          `Too many searches at once for this ${reason === 'key' ? 'session' : 'organization'} (at most ${limit}); retry after one finished`,
        ),
      closed: () => new ServiceUnavailableError('The service is shutting down'),
      failed: (message) => new Error(`grep worker failed: ${message}`),
    },
  );

  function search(tenant: PoolTenant): GrepSearch {
    let leftMs = opts.timeoutMs;

    async function run(job: Omit<GrepJob, 'budgetMs'>): Promise<number[]> {
      if (leftMs <= 0) throw new GrepTimeoutError(opts.timeoutMs);
      let reply: GrepJobReply;
      try {
        reply = await pool.run<GrepJobReply>({ ...job, budgetMs: leftMs }, [], tenant);
      } catch (err) {
        if (!(err instanceof JobStopped)) throw err;
        leftMs = 0;
        // Compiling alone is bounded by the program's size: stopped there, the pattern is the cause.
        if (job.texts.length === 0) throw new InvalidRequestError('Pattern too complex: compiling it exceeded the search limits');
        throw new GrepTimeoutError(opts.timeoutMs);
      }
      if (!reply.ok) throw replyError(reply);
      leftMs -= reply.spentMs;
      if (!reply.finished) throw new GrepTimeoutError(opts.timeoutMs);
      return reply.hits;
    }

    return {
      async compile(matcher) {
        await run({ matcher, texts: [], max: 0 });
        return { match: (texts, max = texts.length) => (texts.length && max > 0 ? run({ matcher, texts, max }) : Promise.resolve([])) };
      },
    };
  }

  return { search, stats: pool.stats, close: pool.close };
}

/** The worker's 4xx as the error the inline compiler throws; anything else is a failure. */
function replyError(reply: Extract<GrepJobReply, { ok: false }>): Error {
  if (reply.status >= 500) return new Error(`grep worker failed: ${reply.message}`);
  if (reply.status === 400) return new InvalidRequestError(reply.message);
  return new AppError(reply.status, reply.code, reply.message);
}
