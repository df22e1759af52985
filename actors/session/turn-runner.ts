/**
 * The turn runner: runs one attempt (turn-attempt.ts) per claimed job and settles it — ack,
 * give back with backoff, or fail for good — and keeps each session's folded log between
 * turns. Everything durable is in the log, so an attempt can die anywhere and the next one
 * (on any worker) continues from the log.
 */
import { isBusUnavailable } from '../../src/bus/index.js';
import type { TurnClaim } from '../../src/bus/index.js';
import { RecencyMap } from '../../src/bus/index.js';
import { isDatabaseUnavailable } from '../../src/db/index.js';
import type { Logger } from '../../src/log.js';
import { DEFAULT_MAX_PARALLEL_TOOLS, DEFAULT_SECRET_CHECK_WAIT_MS } from './steps/act-step.js';
import { lazyChildLogger } from './lazy-logger.js';
import { TurnAttempt } from './turn-attempt.js';
import type { TurnRunnerDeps, TurnRunnerOptions } from './turn-runner-deps.js';
import { RetryableTurnError, TurnStoppedError } from '../../src/turns/index.js';
import { parseTurnJob, type TurnJobData } from '../../src/turns/index.js';
import { pauseMs, retryPolicies } from '../../src/retry/index.js';
import type { StartingPoint } from './log/turn-log.js';
import { createSnapshotStore } from './log/snapshot-store.js';

/** Default of SESSION_SNAPSHOT_INTERVAL_EVENTS (docs/operations.md §37). */
export const DEFAULT_SNAPSHOT_INTERVAL_EVENTS = 200;

/** A session's fold kept between its turns, and the sequence its stored snapshot is at. */
interface CachedFold {
  fold: StartingPoint;
  storedAt: number;
}
import { defaultCompactionOptions } from './compaction/compactor.js';

export type { TurnRunnerDeps, TurnRunnerOptions } from './turn-runner-deps.js';

/** How a process shutdown reaches a running attempt. */
export interface TurnShutdownSignals {
  /** Shutdown begins: stop at the next step boundary, letting running tools finish. */
  drain?: AbortSignal;
  /** The shutdown window ran out: stop now (running tools are aborted). */
  abort?: AbortSignal;
}

export function defaultTurnRunnerOptions(): TurnRunnerOptions {
  return {
    maxIterations: 100,
    toolTimeoutMs: 60_000,
    secretCheckWaitMs: DEFAULT_SECRET_CHECK_WAIT_MS,
    leaseMs: 60_000,
    maxParallelTools: DEFAULT_MAX_PARALLEL_TOOLS,
    deltaIntervalMs: 100,
    pollMs: 1_000,
    maxDeliveries: 10,
    cancelEventsWaitMs: 5_000,
    cacheSize: 2_000,
    cacheIdleMs: 60_000,
    appendRetry: retryPolicies.turnAppendOutcome,
    snapshotIntervalEvents: DEFAULT_SNAPSHOT_INTERVAL_EVENTS,
    compaction: defaultCompactionOptions(),
  };
}

/** How soon a job whose attempt stopped as a stale claim is offered again, in ms. */
const STALE_CLAIM_RETRY_MS = 250;

/**
 * Pause before retrying an attempt that failed because the bus or the database could not be
 * reached, in ms. Such an attempt already rode out what it could (turn-log.ts retries appends
 * for ~10 s); backing off exponentially here made turns hit by a NATS leader election wait
 * 4-8 s after the new leader was up (issue 13: 15 s to recover from a node loss).
 */
const OUTAGE_RETRY_MS = 500;

/** An unreachable dependency, not a defect of the turn: retried soon, and never failed for good. */
function isOutage(err: unknown): boolean {
  return isBusUnavailable(err) || isDatabaseUnavailable(err);
}

export function createTurnRunner(deps: TurnRunnerDeps, options: Partial<TurnRunnerOptions> = {}) {
  const o = { ...defaultTurnRunnerOptions(), ...options };
  const cache = new RecencyMap<string, CachedFold>({ max: o.cacheSize, idleMs: o.cacheIdleMs });
  const snapshots = createSnapshotStore(deps.store, deps.log, { intervalEvents: o.snapshotIntervalEvents }, deps.folds);

  /**
   * The session's fold in this worker's cache, else its stored snapshot (issue 26: never the whole
   * log). A session's first turn (its start carries `session.started`) has none to load: snapshots
   * are written at turn ends, so that lookup is saved for every new session.
   */
  async function startingPoint(sessionId: string, job: TurnJobData): Promise<CachedFold | undefined> {
    const cached = cache.get(sessionId);
    const firstTurn = job.preamble?.some((e) => e.type === 'session.started') ?? false;
    if (cached || firstTurn || o.snapshotIntervalEvents <= 0) return cached;
    const stored = await snapshots.load(sessionId);
    return stored && { fold: { transcript: stored.transcript }, storedAt: stored.sequence };
  }

  /**
   * One attempt at a claimed turn. Never throws: failures are acked, nakked or logged.
   * `shutdown.drain` ends the attempt at its next step boundary (running tools finish);
   * `shutdown.abort` ends it at once (the shutdown window ran out).
   */
  async function run(claim: TurnClaim, shutdown: TurnShutdownSignals = {}): Promise<void> {
    const sessionId = claim.turn.session_id;
    let job: ReturnType<typeof parseTurnJob>;
    try {
      job = parseTurnJob(claim.turn);
    } catch (err) {
      deps.log.error({ err, sessionId }, 'dropping an unreadable turn job');
      await claim.ack().catch(() => undefined);
      return;
    }
    const log = lazyChildLogger(deps.log, { sessionId, turnId: job.turn_id });
    log.info({ delivery: claim.deliveryCount, kind: job.kind }, 'turn claimed');
    const attempt = new TurnAttempt(deps, o, claim, job, log);
    const onDrain = () => attempt.drain(new TurnStoppedError('shutdown'));
    const onAbort = () => attempt.abort(new TurnStoppedError('shutdown'));
    shutdown.drain?.addEventListener('abort', onDrain, { once: true });
    shutdown.abort?.addEventListener('abort', onAbort, { once: true });
    if (shutdown.drain?.aborted) onDrain();
    if (shutdown.abort?.aborted) onAbort();
    let failure: unknown;
    try {
      const start = await startingPoint(sessionId, job);
      const folded = await attempt.run(start?.fold);
      if (folded) cache.set(sessionId, { fold: folded, storedAt: snapshots.refresh(sessionId, folded.transcript, start?.storedAt ?? 0) });
    } catch (err) {
      failure = err;
      cache.delete(sessionId);
      await settleFailure(claim, attempt, err, log);
    } finally {
      shutdown.drain?.removeEventListener('abort', onDrain);
      shutdown.abort?.removeEventListener('abort', onAbort);
      attempt.close(failure);
    }
    // The turn may have ended with messages waiting: the next one starts now (a no-op while the session is busy).
    await deps.dispatcher?.nextQuietly(sessionId);
  }

  async function settleFailure(claim: TurnClaim, attempt: TurnAttempt, err: unknown, log: Logger): Promise<void> {
    try {
      if (err instanceof TurnStoppedError) {
        log.warn({ reason: err.reason }, 'turn attempt stopped');
        if (err.reason === 'shutdown') await claim.nak(0);
        if (err.reason === 'void') await claim.ack();
        // A claim that only looked stale (a read that missed our own record) is still ours: give
        // the job back soon instead of leaving it to the lease. nak is fenced like ack, so a claim
        // someone else really holds is left alone.
        if (err.reason === 'stale_claim') await claim.nak(STALE_CLAIM_RETRY_MS);
        return;
      }
      const outage = isOutage(err);
      if (claim.deliveryCount >= o.maxDeliveries && !outage) {
        log.error({ err, delivery: claim.deliveryCount }, 'turn failed for good after repeated internal errors');
        await attempt.failForGood();
        return;
      }
      const delay =
        err instanceof RetryableTurnError
          ? err.retryAfterMs
          : outage
            ? OUTAGE_RETRY_MS
            : pauseMs(retryPolicies.turnAttempt.backoff, Math.max(1, claim.deliveryCount));
      log.error({ err, delivery: claim.deliveryCount, retryInMs: delay }, 'turn attempt failed; will retry');
      await claim.nak(delay);
    } catch (again) {
      log.error({ err: again }, 'could not settle the turn attempt; the claim lease will expire');
    }
  }

  return { run };
}

export type TurnRunner = ReturnType<typeof createTurnRunner>;
