/**
 * Where a turn attempt begins, changes the session's status, and, when every attempt failed,
 * ends: what it does around its reason/act loop.
 */
import type { TurnClaim } from '../../src/bus/index.js';
import {
  cancelEvents,
  TurnStoppedError,
  turnEvents,
  ZERO_USAGE,
  type MessageQueue,
  type SessionStatusStore,
  type TurnJobData,
  type TurnRef,
} from '../../src/turns/index.js';
import type { Logger } from '../../src/log.js';
import { retryPolicies, waitUntil } from '../../src/retry/index.js';
import type { TurnLog } from './log/turn-log.js';

export interface TurnBoundsContext {
  status: SessionStatusStore;
  /** Absent in runners built without the message queue (tests). */
  queue?: Pick<MessageQueue, 'markStarted'>;
  claim: TurnClaim;
  job: TurnJobData & { turn: TurnRef };
  sessionId: string;
  newId: () => string;
  log: Logger;
  /** How long a status change refused by a pending cancel waits for the cancel's events, in ms. */
  cancelEventsWaitMs: number;
}

/**
 * A start job carries the turn's first events (input.message … session.activated; a compact
 * job's have no input.message) and its
 * attempt is their one writer. The session row decides before anything is appended: a start
 * whose request was answered with an error (voided while its job was in flight) leaves no
 * trace, and a cancel requested before the turn began is this attempt's to write. An earlier
 * attempt may have stored a part of them: what the log lacks goes out under the job's ids.
 * `seedIds`: the last of the API's ids, after which the attempt mints its own, whatever this
 * host's clock says.
 */
export async function beginTurn(c: TurnBoundsContext, turnLog: TurnLog, seedIds: (lastId: string) => void): Promise<void> {
  const preamble = c.job.preamble;
  const s = turnLog.state;
  if (c.job.kind === 'resume' || !preamble || (s.hasTurnStarted && s.activated)) return;
  const begun = await c.status.begin(c.sessionId, c.job.turn_id);
  if (!begun) {
    // A void turn can never run, but it may hold the row active: two dispatchers of a queued
    // message raced, one marked its turn active just before the other voided it. Released here,
    // the dispatch at this attempt's end starts the message (else the session stayed busy).
    await c.status.abandonUnbegun(c.sessionId, c.job.turn_id);
    throw new TurnStoppedError('void');
  }
  // A queued message leaves its queue once its turn began (decision 0097); a dispatcher finds its turn.started should this fail.
  if (c.job.queued_id) await c.queue?.markStarted(c.job.queued_id, c.job.turn_id);
  seedIds(preamble.at(-1)!.id!);
  const missing = preamble.filter((e) => !turnLog.hasStored(e.id!));
  turnLog.push(missing, { stamped: true, mayBeStored: !begun.first });
  // A cancel before the turn began, or one whose API found no turn.started to follow (the
  // earlier attempt died before storing it; src/api/turns/cancel-turn.ts), is this attempt's to write.
  const startedMissing = missing.some((e) => e.id === c.job.turn_id);
  if (begun.cancelRequested && (begun.first || startedMissing) && !turnLog.state.cancelled) {
    turnLog.push(cancelEvents(c.newId, c.job.turn, ZERO_USAGE));
  }
}

/**
 * A status change that a pending, not yet logged cancel may refuse (session-status.ts). Then
 * waits for the cancel's events and returns false so the loop closes the turn as cancelled.
 */
export async function changeStatus(
  c: TurnBoundsContext,
  turnLog: TurnLog,
  change: (cancelHandled: boolean) => Promise<boolean>,
): Promise<boolean> {
  if (await change(turnLog.state.cancelled)) return true;
  const row = await c.status.read(c.sessionId);
  if (!row) throw new TurnStoppedError('session_deleted');
  if (row.cancel_requested_turn_id !== c.job.turn_id || turnLog.state.cancelled) return true;
  const waited = { ...retryPolicies.cancelEvents, deadlineMs: c.cancelEventsWaitMs };
  const cancelStored = async () => {
    await turnLog.sync();
    return turnLog.state.cancelled;
  };
  if (await waitUntil(cancelStored, waited)) return false;
  c.log.warn('cancel requested but its events never arrived; finishing the turn');
  return change(true);
}

/** After too many failed attempts: records the failure and idles the session, so it is usable again. */
export async function endTurnForGood(c: TurnBoundsContext, turnLog: TurnLog): Promise<void> {
  const s = turnLog.state;
  if (!s.outcome && !s.idled) {
    const failed = turnEvents.turnFailed(c.newId(), c.job.turn, {
      error: 'Internal error',
      error_code: 'internal_error',
      iterations: s.steps.length,
    });
    await turnLog.commit([failed]);
  }
  if (!turnLog.state.idled) {
    await c.status.markIdle(c.sessionId, c.job.turn_id, turnLog.transcript.usage, true);
    await turnLog.commit([turnEvents.sessionIdled(c.newId(), c.job.turn, { iterations: s.steps.length, usage: turnLog.transcript.usage })]);
  }
  await c.claim.ack();
}
