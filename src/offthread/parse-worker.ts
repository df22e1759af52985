/**
 * The body of one parse-pool worker thread (see `parse-pool.ts`): runs one job at a time and
 * answers with its result. A job that runs too long is not stopped here: the pool terminates
 * the whole thread and starts another.
 */
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { replyTo, type ParseJob } from './parse-jobs.js';

const port = parentPort!;

/**
 * On Linux a thread has its own nice value: lowering this one's lets the event-loop thread win
 * the CPU while a hostile document burns its deadline here. Best effort.
 */
function lowerThreadPriority(): void {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, 10);
  } catch {
    // Not Linux, or not permitted: run at the process's priority.
  }
}

lowerThreadPriority();
port.on('message', (job: ParseJob) => port.postMessage(replyTo(job)));
port.postMessage({ ready: true });
