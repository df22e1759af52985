/**
 * This service process's heartbeat in the `process_liveness` table (migration 0017): one row per
 * process (a fresh id at every start, so a restart under the same INSTANCE_ID is a new process
 * and its predecessor is known dead at once), its `beat_at` renewed every `beatMs`, deleted at
 * a clean close. Works in every mode, since every mode has the database. Readers call a process
 * dead when its row is gone or its beat is older than `deadAfterMs` (database time, so skewed
 * clocks agree): the in-flight `Idempotency-Key` of a killed instance is taken over in seconds.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../log.js';
import type { Store } from './store.js';

export interface ProcessLivenessOptions {
  instanceId: string;
  /** How often the heartbeat is written, in ms (default 1000). */
  beatMs: number;
  /** A process whose last beat is older than this is dead, in ms (default 5000: five missed beats). */
  deadAfterMs: number;
}

export const DEFAULT_LIVENESS_BEAT_MS = 1_000;
export const DEFAULT_LIVENESS_DEAD_AFTER_MS = 5_000;

/** Rows of processes dead this long are deleted (a killed process never deletes its own). */
const PURGE_DEAD_AFTER = '1 day';
/** Purge every this many beats (every ~10 min at the default beat). */
const PURGE_EVERY_BEATS = 600;

export function createProcessLiveness(
  { store, log }: { store: Store; log: Logger },
  opts: Pick<ProcessLivenessOptions, 'instanceId'> & Partial<ProcessLivenessOptions>,
) {
  const { instanceId, beatMs = DEFAULT_LIVENESS_BEAT_MS, deadAfterMs = DEFAULT_LIVENESS_DEAD_AFTER_MS } = opts;
  const processId = randomUUID();
  let written: Promise<void> | null = null;
  let closed = false;
  /** The write under way: close() waits for it, or it could put the row back after the delete. */
  let pending: Promise<unknown> = Promise.resolve();

  function beat(): Promise<void> {
    const write = store
      .sql(
        `insert into process_liveness (process_id, instance_id) values (?, ?)
         on conflict (process_id) do update set beat_at = now()`,
        [processId, instanceId],
      )
      .then(() => undefined);
    pending = write.catch(() => undefined);
    return write;
  }

  /** Deletes rows of processes long dead. */
  async function purge(): Promise<void> {
    await store.sql(`delete from process_liveness where beat_at < now() - interval '${PURGE_DEAD_AFTER}'`);
  }

  let beats = 0;
  /** One warning per outage, not one per beat. */
  let failing = false;
  const timer = setInterval(() => {
    beat().then(
      () => (failing = false),
      (err: unknown) => {
        if (!failing) log.warn({ err, component: 'process-liveness' }, 'writing the heartbeat failed; retrying every beat');
        failing = true;
      },
    );
    if (++beats % PURGE_EVERY_BEATS === 0) purge().catch(() => undefined);
  }, beatMs);
  timer.unref();

  return {
    processId,
    deadAfterMs,
    /**
     * Resolves once this process's row exists: a claim naming this process is written only
     * after it, so "no row" can always be read as "dead" (a failed first write is tried again).
     */
    ready(): Promise<void> {
      written ??= beat().catch((err: unknown) => {
        written = null;
        throw err;
      });
      return written;
    },
    /** Stops the heartbeat and leaves at once: what this process held is free for others. */
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      await pending;
      await store.sql('delete from process_liveness where process_id = ?', [processId]).catch(() => undefined);
    },
  };
}

export type ProcessLiveness = ReturnType<typeof createProcessLiveness>;
