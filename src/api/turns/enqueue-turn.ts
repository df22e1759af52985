/**
 * Queues a turn's start job and marks the session row active (docs/decisions/0028): shared by a
 * message (submit-message.ts) and a compaction on demand (compact-session.ts). The queue holds one
 * turn per session, so a busy session answers 409 with nothing written; a previous turn's job that
 * is about to be acked is waited for, and an enqueue whose outcome is unknown voids the turn.
 */
import type { TurnJob } from '../../bus/index.js';
import { SessionBusyError } from '../../errors.js';
import { retry, retryPolicies } from '../../retry/index.js';
import type { SessionTurnRow } from '../../turns/index.js';
import { BUSY_STATUSES, type TurnApiContext } from './turn-api-context.js';

/** How long the previous turn's ack may take before its job is removed for the next message, in ms. */
const ACK_GRACE_MS = 250;
/** Events read back from the log's end to find the previous turn's session.idled (session events may follow it). */
const ENDED_TAIL = 16;

/** The queue still holds the previous turn's job, which the row says is over: it is about to be acked. */
class PreviousJobQueued extends Error {
  constructor(readonly busy: SessionBusyError) {
    super('the previous turn’s job is still queued');
  }
}

export function createEnqueueTurn(ctx: TurnApiContext) {
  const { bus, log, status } = ctx;

  /** Queues `job` (its turn seen idle on `row`), then shows the session active. 409 while another turn runs. */
  async function enqueueTurn(job: TurnJob, row: SessionTurnRow): Promise<void> {
    const { session_id: sessionId, turn_id: turnId } = job;
    await enqueueStart(job, row).catch((err: unknown) => settleUnknownStart(err, sessionId, turnId));
    // The row says active before the answer, so a read or a cancel right after it sees the turn.
    // (The worker's `begin` shows it active too, should this process die first.)
    try {
      await status.markActive(sessionId, turnId);
    } catch (err) {
      log.warn({ err, sessionId, turnId }, 'turn accepted; the session row is left to the worker');
    }
  }

  /**
   * The job's enqueue failed, but a publish that timed out may still be stored later (a frozen
   * NATS leader wakes): before the error is answered, the turn is voided so its job, should it
   * arrive, is dropped (issue 32 item 1). If its worker already started it, it was accepted.
   */
  async function settleUnknownStart(err: unknown, sessionId: string, turnId: string): Promise<void> {
    if (err instanceof SessionBusyError) throw err;
    if (await status.voidTurn(sessionId, turnId)) throw err;
    log.warn({ err, sessionId, turnId }, 'enqueue failed, but its turn has started: accepted');
  }

  /**
   * Enqueues; a busy queue whose job is stale is asked again (retryPolicies.previousTurnJob).
   * The previous turn's ack normally lands within milliseconds; a job still there after
   * ACK_GRACE_MS (a frozen worker, a NATS election: issue 32 item 4, 409s after session.idled)
   * is not waited for, and neither is a job whose start was answered with an error (void: its
   * publish landed late). The look repeats every ACK_GRACE_MS: the log or the queue may answer
   * only once a new leader is elected.
   */
  async function enqueueStart(job: TurnJob, seen: SessionTurnRow): Promise<void> {
    let lookedAt = Date.now();
    let removed = false;
    const enqueue = async () => {
      try {
        await bus.turns.enqueue(job);
      } catch (err) {
        // Busy, but the row says the last turn is over: its job is about to be acked. Anything
        // else (a turn started meanwhile, which moves current_turn_id) is really busy.
        if (!(err instanceof SessionBusyError)) throw err;
        const now = await status.read(job.session_id);
        const settling = now && !BUSY_STATUSES.has(now.status) && now.current_turn_id === seen.current_turn_id;
        if (!settling) throw err;
        if (Date.now() - lookedAt >= ACK_GRACE_MS) {
          removed ||= await removeStaleJob(job.session_id, seen.current_turn_id);
          lookedAt = Date.now();
        }
        throw new PreviousJobQueued(err);
      }
    };
    await retry(enqueue, retryPolicies.previousTurnJob, { retryable: (err) => err instanceof PreviousJobQueued }).catch(
      async (err: unknown) => {
        if (!(err instanceof PreviousJobQueued)) throw err;
        // A removal slowed by a stalled connection can end past the deadline: the way is clear, ask once more.
        if (!removed) throw err.busy;
        await bus.turns.enqueue(job);
      },
    );
  }

  /**
   * Removes the queued job when it can never run: the finished turn's, once the log's last
   * events show it ended (session.idled stored), or a void turn's (begin refuses it anyway).
   * True when no such job is queued any more.
   */
  async function removeStaleJob(sessionId: string, finishedTurnId: string | null): Promise<boolean> {
    const queued = await bus.turns.queued(sessionId);
    if (queued === null) return true;
    const stale = queued === finishedTurnId ? await endedInLog(sessionId, queued) : await status.isVoid(sessionId, queued);
    if (!stale) return false;
    const removed = await bus.turns.removeFinished(sessionId, queued);
    const why = queued === finishedTurnId ? 'finished' : 'void';
    log.info({ sessionId, turnId: queued, removed, why }, 'a stale turn job was still queued; removed for the next message');
    return removed;
  }

  /** Whether the log's last events hold the turn's session.idled (session events may follow it). */
  async function endedInLog(sessionId: string, turnId: string): Promise<boolean> {
    const last = await bus.events.lastSequence(sessionId);
    const tail = await bus.events.read(sessionId, { afterSequence: Math.max(0, last - ENDED_TAIL), limit: ENDED_TAIL });
    return tail.some((e) => e.type === 'session.idled' && e.context.turn_id === turnId);
  }

  return enqueueTurn;
}
