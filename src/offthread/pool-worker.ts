/**
 * The worker side of a deadline pool (`deadline-pool.ts`): a worker module's default export is
 * `poolTask(handle)`, which tells the pool when each job starts (its deadline counts from then)
 * and lowers the thread's priority.
 */
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { move, transferableSymbol, valueSymbol } from 'piscina';

/** piscina's task handler: announces the job, then runs it. */
export function poolTask<J, R>(handle: (job: J) => R): (task: { id: number; job: J }) => R {
  lowerThreadPriority();
  return ({ id, job }) => {
    parentPort!.postMessage({ started: id });
    return handle(job);
  };
}

/** `value` as a job's answer that hands `buffer` over to the parent instead of copying it. */
export function transferring<T extends object>(value: T, buffer: ArrayBuffer): T {
  return move({ [transferableSymbol]: buffer, [valueSymbol]: value }) as unknown as T;
}

/**
 * On Linux a thread has its own nice value: lowering this one's lets the event-loop thread win
 * the CPU while a hostile job burns its deadline here. Best effort. (piscina's `niceIncrement`
 * would do the same through an optional native module, `@napi-rs/nice`; this needs none.)
 */
function lowerThreadPriority(): void {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, 10);
  } catch {
    // Not Linux, or not permitted: run at the process's priority.
  }
}
