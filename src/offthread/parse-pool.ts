/**
 * Runs parsers fed by callers (agent definitions in YAML/Markdown/JSON, client tools' JSON
 * Schemas, fetched HTML) on a small pool of worker threads, so a hostile document costs a
 * worker its deadline instead of stalling every request of every tenant.
 *
 * Bounds: a job still running after `timeoutMs` (from the moment a worker takes it) has its
 * worker terminated and replaced, and fails with a `ParseLimitError`; so does a job whose
 * worker runs out of its `memoryMb` heap. At most `queueMax` jobs wait (503 beyond).
 */
import { Worker } from 'node:worker_threads';
import { AppError, InvalidRequestError, LimitExceededError, ServiceUnavailableError } from '../errors.js';
import type { ParseJob, ParseJobInput, ParseJobReply, ParseResults } from './parse-jobs.js';

export interface ParsePoolOptions {
  /** Worker threads (PARSE_WORKERS). */
  workers: number;
  /** Wall-clock limit of one job, ms (PARSE_TIMEOUT_MS). */
  timeoutMs: number;
  /** JS heap of each worker, MB (PARSE_WORKER_MEMORY_MB). */
  memoryMb: number;
  /** Jobs waiting for a worker (PARSE_QUEUE_MAX). */
  queueMax: number;
}

export const DEFAULT_PARSE_POOL_OPTIONS: ParsePoolOptions = { workers: 2, timeoutMs: 5000, memoryMb: 256, queueMax: 64 };

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
  run<K extends ParseJobInput['kind']>(job: Extract<ParseJobInput, { kind: K }>): Promise<ParseResults[K]>;
  /** Live figures, for tests and diagnostics. */
  stats(): { workers: number; busy: number; queued: number; replaced: number };
  /** Terminates the workers; waiting jobs fail with 503. */
  close(): Promise<void>;
}

interface Pending {
  job: ParseJobInput;
  resolve(value: unknown): void;
  reject(err: Error): void;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  current?: { id: number; call: Pending; timer: NodeJS.Timeout };
}

const WORKER_URL = new URL('./parse-worker.js', import.meta.url);

/** Creates the pool; workers start on first use, and idle workers do not keep the process alive. */
export function createParsePool(options: Partial<ParsePoolOptions> = {}): ParsePool {
  const opts = { ...DEFAULT_PARSE_POOL_OPTIONS, ...options };
  const slots = new Set<Slot>();
  const queue: Pending[] = [];
  let nextId = 1;
  let replaced = 0;
  let closed = false;

  function spawn(): void {
    const worker = new Worker(WORKER_URL, { resourceLimits: { maxOldGenerationSizeMb: opts.memoryMb, maxYoungGenerationSizeMb: 16 } });
    const slot: Slot = { worker, ready: false };
    slots.add(slot);
    worker.on('message', (msg: ParseJobReply | { ready: true }) => {
      if ('ready' in msg) {
        slot.ready = true;
        worker.unref();
      } else if (slot.current?.id === msg.id) {
        const { call, timer } = slot.current;
        clearTimeout(timer);
        slot.current = undefined;
        worker.unref();
        if (msg.ok) call.resolve(msg.value);
        else call.reject(replyError(msg));
      }
      dispatch();
    });
    worker.on('error', (err: Error & { code?: string }) =>
      retire(slot, err.code === 'ERR_WORKER_OUT_OF_MEMORY' ? new ParseLimitError('memory', `${opts.memoryMb} MB`) : new Error(`parse worker failed: ${err.message}`)));
    worker.on('exit', () => retire(slot, new Error('parse worker stopped')));
  }

  /** Takes a slot out of the pool, fails its job, and starts a replacement if still needed. */
  function retire(slot: Slot, err: Error): void {
    if (!slots.delete(slot)) return;
    if (slot.current) {
      clearTimeout(slot.current.timer);
      slot.current.call.reject(err);
      slot.current = undefined;
    }
    void slot.worker.terminate();
    if (closed) return;
    if (!slot.ready) {
      // It never started (a broken installation): fail what waits rather than respawn in a loop.
      for (const call of queue.splice(0)) call.reject(err);
      return;
    }
    replaced++;
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
      const timer = setTimeout(() => retire(slot, new ParseLimitError('timeout', formatSeconds(opts.timeoutMs))), opts.timeoutMs);
      slot.current = { id, call, timer };
      slot.worker.ref();
      slot.worker.postMessage({ ...call.job, id } satisfies ParseJob);
    }
  }

  return {
    run(job) {
      if (closed) return Promise.reject(new ServiceUnavailableError('The service is shutting down'));
      if (queue.length >= opts.queueMax) return Promise.reject(new ServiceUnavailableError('The document parser is busy; try again shortly'));
      return new Promise((resolve, reject) => {
        queue.push({ job, resolve: resolve as (value: unknown) => void, reject });
        dispatch();
      });
    },
    stats: () => ({ workers: slots.size, busy: [...slots].filter((s) => s.current).length, queued: queue.length, replaced }),
    async close() {
      closed = true;
      for (const call of queue.splice(0)) call.reject(new ServiceUnavailableError('The service is shutting down'));
      const all = [...slots];
      slots.clear();
      for (const slot of all) {
        if (!slot.current) continue;
        clearTimeout(slot.current.timer);
        slot.current.call.reject(new ServiceUnavailableError('The service is shutting down'));
      }
      await Promise.all(all.map((s) => s.worker.terminate()));
    },
  };
}

/** The worker's 4xx as the same error class the inline parser throws; anything else is a failure. */
function replyError(reply: Extract<ParseJobReply, { ok: false }>): Error {
  if (reply.status >= 500) return new Error(`parse worker failed: ${reply.message}`);
  if (reply.code === 'limit_exceeded') return new LimitExceededError(reply.message);
  if (reply.status === 400) return new InvalidRequestError(reply.message);
  return new AppError(reply.status, reply.code, reply.message);
}

/** 5000 → "5 s", 250 → "0.25 s". */
function formatSeconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(3))} s`;
}
