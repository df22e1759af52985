/** How long a turn's append whose outcome is unknown is retried (turn-log.ts). */
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Pauses before each retry of an append (or of its claim check) whose outcome is unknown: about
 * 10 s in all, longer than a replicated stream takes to elect a new leader, and short each, so
 * the append goes through within half a second of the new leader instead of up to 4 s later
 * (issue 13: the slow tail of a NATS node loss). The retries also end once that long has passed
 * since the first failure, however long each try took: tries that each ran into a request
 * timeout, or a 2 s wait, kept one attempt at a preamble for 60 s (issue 13, the SIGTERM
 * straggler); the job goes back to the queue instead.
 */
export const DEFAULT_APPEND_RETRY_DELAYS_MS: readonly number[] = [250, 250, ...Array<number>(19).fill(500)];

/** The pauses left to one append's retries, and the time they may take in all. */
export class RetryPauses {
  readonly #pauses: number[];
  readonly #budgetMs: number;
  #deadline: number | undefined;

  constructor(pauses: readonly number[]) {
    this.#pauses = [...pauses];
    this.#budgetMs = pauses.reduce((a, b) => a + b, 0);
  }

  /**
   * Waits out the next pause; false when none is left or the pauses' total has passed since the
   * first failure (so the retries end within that, one more pause and one more try).
   */
  async wait(): Promise<boolean> {
    this.#deadline ??= Date.now() + this.#budgetMs;
    const pause = this.#pauses.shift();
    if (pause === undefined || Date.now() > this.#deadline) return false;
    await sleep(pause);
    return true;
  }
}
