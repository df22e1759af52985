/**
 * A piscina pool of worker threads whose jobs each have a deadline, counted from the moment a
 * worker starts the job (not while it waits): past it the job's AbortSignal fires, and piscina
 * terminates that worker and starts a replacement in the background. Shared by the SQL sandbox
 * and the parse pool; their workers wrap their handler in `poolTask` (pool-worker.ts), which
 * announces each job as it starts.
 */
import type { Piscina } from 'piscina';
import type { ResourceLimits, Transferable } from 'node:worker_threads';

export interface DeadlinePoolOptions {
  /** The worker module; its default export is a `poolTask(...)`. */
  worker: URL;
  workers: number;
  timeoutMs: number;
  /** Jobs waiting for a worker; beyond, `errors.busy()`. */
  queueMax: number;
  resourceLimits: ResourceLimits;
  workerData?: unknown;
}

/** The errors a job fails with when it did not end by its own answer. */
export interface DeadlinePoolErrors {
  timeout(): Error;
  memory(): Error;
  busy(): Error;
  closed(): Error;
  /** The worker died some other way (a crash): not the caller's fault. */
  failed(message: string): Error;
}

export interface DeadlinePool {
  run<R>(job: unknown, transferList?: Transferable[]): Promise<R>;
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
    });
    return pool;
  }

  return {
    async run<R>(job: unknown, transferList?: Transferable[]): Promise<R> {
      if (closed) throw errors.closed();
      // No await once the pool exists: a job is queued by the time run() returns its promise.
      const p = pool ?? (await piscina());
      if (p.queueSize >= opts.queueMax) throw errors.busy();
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
    },
    stats: () => ({ workers: pool?.threads.length ?? 0, busy: running.size, queued: pool?.queueSize ?? 0, replaced }),
    async close() {
      closed = true;
      await pool?.destroy();
    },
  };
}

/** A deadline as its errors word it: 5000 → "5 s", 250 → "0.25 s". */
export function formatSeconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(3))} s`;
}
