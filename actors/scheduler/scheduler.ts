/**
 * The scheduler: fires due session schedules (`session_schedule`) as user messages that start
 * a turn. Every instance with ROLE all|worker runs one; they share the `session_schedules`
 * table, and a claim (FOR UPDATE SKIP LOCKED + claim token, src/session-storage/schedule-queue.ts) hands
 * each due firing to exactly one of them. A busy session gives the claim back for a short delay,
 * so the message arrives after the running turn. All state is in the database: a restart loses
 * nothing, and a claim left by a crashed instance is taken over when its lease runs out.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { nextCronRun } from '../../src/capabilities/index.js';
import { SessionBusyError, TooManyRequestsError, ensureError } from '../../src/errors.js';
import type { Logger } from '../../src/log.js';
import type { ScheduleClaim, ScheduleQueue } from '../../src/session-storage/index.js';

/** Sends a schedule's message to its session (the turn service's `submitMessage`). Throws SessionBusyError when a turn runs. */
export type ScheduleSubmit = (claim: ScheduleClaim, text: string) => Promise<void>;

export interface SchedulerOptions {
  /** Who claims (logs, `claimed_by`). */
  instanceId: string;
  /** How often an idle scheduler looks for due schedules, in ms (default 1000). */
  pollMs: number;
  /** How long a claim lasts before another instance may take it over, in ms (default 60000). */
  leaseMs: number;
  /** Delay before a busy session is tried again, in ms (default 2000). */
  busyRetryMs: number;
  /** Delay after an unexpected failure, in ms (default 30000). */
  errorRetryMs: number;
}

export function defaultSchedulerOptions(): Omit<SchedulerOptions, 'instanceId'> {
  return { pollMs: 1000, leaseMs: 60_000, busyRetryMs: 2000, errorRetryMs: 30_000 };
}

export interface SchedulerDeps {
  queue: Pick<ScheduleQueue, 'claimDue'>;
  submit: ScheduleSubmit;
  log: Logger;
}

/** What a firing turns into: the text the session receives. */
export function scheduledMessageText(claim: Pick<ScheduleClaim, 'name' | 'message'>): string {
  return `[Scheduled message "${claim.name}"]\n${claim.message}`;
}

/** The run after this firing: the next cron time after `now` (missed runs collapse into this one), or null for one-shots. */
export function nextRunAfterFiring(claim: Pick<ScheduleClaim, 'kind' | 'cron_expression' | 'timezone' | 'run_at'>, now: Date): Date | null {
  if (claim.kind !== 'cron' || !claim.cron_expression) return null;
  const after = new Date(Math.max(now.getTime(), Date.parse(claim.run_at)));
  return nextCronRun(claim.cron_expression, claim.timezone, after);
}

export function createScheduler(deps: SchedulerDeps, opts: Partial<SchedulerOptions> & Pick<SchedulerOptions, 'instanceId'>) {
  const o: SchedulerOptions = { ...defaultSchedulerOptions(), ...opts };
  const log = deps.log.child({ component: 'scheduler', instanceId: o.instanceId });
  const stop = new AbortController();
  let running: Promise<void> | undefined;

  /** Fires one claimed schedule and records the outcome. */
  async function fire(claim: ScheduleClaim): Promise<void> {
    const ctx = { scheduleId: claim.id, sessionId: claim.session_id, runAt: claim.run_at };
    try {
      await deps.submit(claim, scheduledMessageText(claim));
    } catch (thrown) {
      const err = ensureError(thrown);
      // The session's turn, or the organisation's cap on turns in flight: both pass.
      const busy = err instanceof SessionBusyError || err instanceof TooManyRequestsError;
      if (!busy) log.warn({ ...ctx, err }, 'schedule could not be delivered; retrying later');
      await claim.postpone(busy ? o.busyRetryMs : o.errorRetryMs);
      return;
    }
    const next = nextRunAfterFiring(claim, new Date());
    const recorded = await claim.finish(next);
    if (!recorded) log.warn(ctx, 'schedule fired but its claim had expired; lease too short for the submission');
    else log.info({ ...ctx, nextRunAt: next?.toISOString() ?? null }, 'schedule fired');
  }

  /** Claims and fires due schedules until none is left (or the scheduler stops). Returns how many were handled. */
  async function drain(): Promise<number> {
    let handled = 0;
    while (!stop.signal.aborted) {
      const claim = await deps.queue.claimDue(o.instanceId, o.leaseMs);
      if (!claim) break;
      await fire(claim);
      handled++;
    }
    return handled;
  }

  async function loop(): Promise<void> {
    while (!stop.signal.aborted) {
      try {
        await drain();
      } catch (err) {
        log.error({ err }, 'scheduler pass failed');
      }
      await sleep(o.pollMs, undefined, { signal: stop.signal }).catch(() => undefined);
    }
  }

  return {
    drain,
    start(): void {
      running ??= loop();
    },
    /** Stops polling and waits for the firing in progress. */
    async close(): Promise<void> {
      stop.abort();
      await running;
    },
  };
}

export type Scheduler = ReturnType<typeof createScheduler>;
