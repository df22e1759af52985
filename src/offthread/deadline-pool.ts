/**
 * A piscina pool of worker threads whose jobs each have a deadline, counted from the moment a
 * worker starts the job (not while it waits): past it the job's AbortSignal fires, and piscina
 * terminates that worker and starts a replacement in the background. Shared by the SQL sandbox
 * and the parse pool; their workers wrap their handler in `poolTask` (pool-worker.ts), which
 * announces each job as it starts. Jobs wait in a fair share (`fair-share.ts`) in front of
 * piscina, which is handed a job only when a worker is free.
 */
import type { Piscina } from 'piscina';
import type { ResourceLimits, Transferable } from 'node:worker_threads';
import { createFairShare, type PoolTenant, type ShareRefusal } from './fair-share.js';

/** The tenant of jobs run without one: every such job shares one organisation's share. */
const SHARED_TENANT: PoolTenant = { org: '', key: '' };

export interface DeadlinePoolOptions {
  /** The worker module; its default export is a `poolTask(...)`. */
  worker: URL;
  workers: number;
  timeoutMs: number;
  /** Jobs waiting for a worker, all tenants together; beyond, `errors.busy()`. */
  queueMax: number;
  /** Workers one organisation may occupy at once (default: all). */
  maxRunningPerOrg?: number;
  /** Jobs of one organisation waiting or running; beyond, `errors.tooMany(...)` (default: no bound). */
  maxPerOrg?: number;
  /** Jobs of one caller (session, user) waiting or running; beyond, `errors.tooMany(...)` (default: no bound). */
  maxPerKey?: number;
  resourceLimits: ResourceLimits;
  workerData?: unknown;
}

/** The errors a job fails with when it did not end by its own answer. */
export interface DeadlinePoolErrors {
  timeout(): Error;
  memory(): Error;
  busy(): Error;
  /** The tenant is past its share (organisation or caller); the job was not queued. */
  tooMany(refusal: Exclude<ShareRefusal, { reason: 'busy' }>): Error;
  closed(): Error;
  /** The worker died some other way (a crash): not the caller's fault. */
  failed(message: string): Error;
}

export interface DeadlinePool {
  run<R>(job: unknown, transferList?: Transferable[], tenant?: PoolTenant): Promise<R>;
  /** Live figures, for tests and diagnostics. */
  stats(): { workers: number; busy: number; queued: number; replaced: number };
  /** Terminates the workers; waiting and running jobs fail with `errors.closed()`. */
  close(): Promise<void>;
}

/** Creates the pool; its workers start on first use, and idle workers do not keep the process alive. */
export function createDeadlinePool(opts: DeadlinePoolOptions, errors: DeadlinePoolErrors): DeadlinePool {
  let pool: Piscina | undefined;
  /** The jobs not yet settled, by id: `start` arms the deadline, `fail` drops a job still waiting. */
  const pending = new Map<number, { start(): void; fail(err: Error): void }>();
  const running = new Set<number>();
  let nextId = 1;
  let replaced = 0;
  let closed = false;

  let loaded: Promise<{ Piscina: typeof Piscina }> | undefined;
  const share = createFairShare(
    {
      slots: opts.workers,
      queueMax: opts.queueMax,
      maxRunningPerOrg: opts.maxRunningPerOrg ?? opts.workers,
      maxPerOrg: opts.maxPerOrg ?? Infinity,
      maxPerKey: opts.maxPerKey ?? Infinity,
    },
    (refusal) => (refusal.reason === 'busy' ? errors.busy() : errors.tooMany(refusal)),
  );

  async function piscina(): Promise<Piscina> {
    if (pool) return pool;
    // piscina's modules load with the first job, not at the service's start (issue 13 item 7).
    const { Piscina } = await (loaded ??= import('piscina'));
    if (pool) return pool;
    // Closed while it loaded: start no threads.
    if (closed) throw errors.closed();
    pool = new Piscina({
      filename: opts.worker.href,
      // As many workers as allowed, always: piscina then replaces a terminated one at once.
      minThreads: opts.workers,
      maxThreads: opts.workers,
      resourceLimits: opts.resourceLimits,
      workerData: opts.workerData,
    });
    pool.on('message', (msg: { started?: number }) => pending.get(msg.started ?? 0)?.start());
    pool.on('workerDestroy', () => {
      if (!closed) replaced++;
    });
    // A worker that fails with no job to fail is one that cannot start (a broken installation):
    // piscina stops respawning it, so fail what waits rather than leave it waiting forever.
    pool.on('error', (err: Error) => {
      for (const job of pending.values()) job.fail(err);
      share.abort(errors.failed(err.message));
    });
    return pool;
  }

  async function runNow<R>(job: unknown, transferList?: Transferable[]): Promise<R> {
    if (closed) throw errors.closed();
    const p = pool ?? (await piscina());
    const id = nextId++;
    const deadline = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    pending.set(id, {
      start() {
        running.add(id);
        timer = setTimeout(() => deadline.abort(), opts.timeoutMs);
      },
      fail(err) {
        if (!running.has(id)) deadline.abort(err);
      },
    });
    try {
      return (await p.run({ id, job }, { signal: deadline.signal, transferList })) as R;
    } catch (err) {
      if (closed) throw errors.closed();
      if (deadline.signal.aborted) throw running.has(id) ? errors.timeout() : errors.failed((deadline.signal.reason as Error).message);
      if ((err as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY') throw errors.memory();
      throw errors.failed((err as Error).message);
    } finally {
      clearTimeout(timer);
      pending.delete(id);
      running.delete(id);
    }
  }

  return {
    async run<R>(job: unknown, transferList?: Transferable[], tenant = SHARED_TENANT): Promise<R> {
      if (closed) throw errors.closed();
      return share.run(tenant, () => runNow<R>(job, transferList));
    },
    stats: () => ({
      workers: pool?.threads.length ?? 0,
      busy: running.size,
      queued: share.waiting() + (pool?.queueSize ?? 0),
      replaced,
    }),
    async close() {
      closed = true;
      share.abort(errors.closed());
      await pool?.destroy();
    },
  };
}

/** A deadline as its errors word it: 5000 → "5 s", 250 → "0.25 s". */
export function formatSeconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(3))} s`;
}
