/**
 * What one batch's append waited for: the claim check, the log's answers, the pauses after
 * unknown outcomes, and conflicts with other writers. Logged when the batch took long, so a slow
 * append says why (issue 32 item 4: a `tool.started` stored 12 s late left no log line).
 */
import type { Logger } from '../../../src/log.js';

/** A batch slower than this is logged with its waits, in ms. */
export const SLOW_APPEND_MS = 1_000;

export class AppendWaits {
  readonly #startedAt = performance.now();
  readonly #ms = { fence: 0, append: 0, pause: 0 };
  conflicts = 0;
  unknownOutcomes = 0;

  /** Awaits `p`, adding the time to `kind`. */
  async time<T>(kind: 'fence' | 'append' | 'pause', p: Promise<T>): Promise<T> {
    const t = performance.now();
    try {
      return await p;
    } finally {
      this.#ms[kind] += performance.now() - t;
    }
  }

  /** Logs the waits when the batch took `SLOW_APPEND_MS` or more. */
  report(log: Logger | undefined, events: number): void {
    const totalMs = Math.round(performance.now() - this.#startedAt);
    if (!log || totalMs < SLOW_APPEND_MS) return;
    const { fence, append, pause } = this.#ms;
    log.warn(
      {
        events,
        totalMs,
        fenceMs: Math.round(fence),
        appendMs: Math.round(append),
        pauseMs: Math.round(pause),
        conflicts: this.conflicts,
        unknownOutcomes: this.unknownOutcomes,
      },
      'slow append',
    );
  }
}
