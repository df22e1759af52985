/**
 * The task handler of the grep pool's worker threads (see `grep-pool.ts`). A job that runs past
 * the pool's deadline is not stopped here: the pool terminates the whole thread and starts another.
 */
import { runGrepJob } from './grep-jobs.js';
import { poolTask } from './pool-worker.js';

export default poolTask(runGrepJob);
