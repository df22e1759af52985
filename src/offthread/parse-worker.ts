/**
 * The task handler of the parse pool's worker threads (see `parse-pool.ts`). A job that runs too
 * long is not stopped here: the pool terminates the whole thread and starts another.
 */
import { replyTo } from './parse-jobs.js';
import { poolTask } from './pool-worker.js';

export default poolTask(replyTo);
