/** POST cancel (spec 3.2 steps 1-2); the turn's worker does the rest. */
import { SessionBusyError, UnprocessableError } from '../../errors.js';
import { idSequence } from '../../ids.js';
import { stampEvents } from '../../observability/index.js';
import { cancelEvents, resumeJob, type SessionTurnRow } from '../../turns/index.js';
import { BUSY_STATUSES, type TurnApiContext, type TurnPrincipal } from './turn-api-context.js';
import { readTurnSoFar } from './turn-so-far.js';

export function createCancelTurn(ctx: TurnApiContext) {
  const { bus, log, status, span, owned } = ctx;

  /** Spec 3.2 steps 1-2; the worker does the rest. 422 when no turn runs. */
  async function cancel(principal: TurnPrincipal, sessionId: string): Promise<{ status: 'cancelled' | 'no_op'; message: string }> {
    const row = await owned(principal, sessionId);
    const turnId = row.current_turn_id;
    if (!BUSY_STATUSES.has(row.status) || !turnId) throw new UnprocessableError('Cannot cancel session: session is not active');
    if (row.cancel_requested_turn_id === turnId) return { status: 'no_op', message: 'The turn is already being cancelled' };
    const requested = await status.requestCancel(sessionId, turnId);
    if (!requested) {
      const now = await status.read(sessionId);
      if (now?.cancel_requested_turn_id === turnId) return { status: 'no_op', message: 'The turn is already being cancelled' };
      throw new UnprocessableError('Cannot cancel session: session is not active');
    }
    // A turn whose worker has not begun it gets its cancel's events from that worker (session-status.ts);
    // one whose job is gone as well never will: it is over, with nothing of it in the log.
    if (requested.begun) await appendCancel(sessionId, turnId, row);
    else if ((await bus.turns.queued(sessionId)) === null && (await status.abandonUnbegun(sessionId, turnId)))
      log.warn({ sessionId, turnId }, 'cancel of a turn whose job was lost before it began: session idle');
    await bus.signals.send({ type: 'cancel', session_id: sessionId, turn_id: turnId });
    log.info({ sessionId, turnId }, 'turn cancel requested');
    return { status: 'cancelled', message: 'Turn cancelled' };
  }

  async function appendCancel(sessionId: string, turnId: string, row: SessionTurnRow): Promise<void> {
    const soFar = await readTurnSoFar(bus, sessionId, turnId, true);
    if (!soFar) {
      // Begun, but its first events are not stored yet: the worker died in between, and the next
      // attempt finds the cancel pending on the row (turn-attempt.ts).
      return log.warn({ sessionId, turnId }, 'cancel recorded; the turn has no events yet, its worker appends them');
    }
    const { turn, usage } = soFar;
    const trace = span();
    const events = cancelEvents(idSequence(), turn, usage);
    stampEvents(events, trace);
    await bus.events.append(sessionId, events);
    // No job is queued while a turn waits for the client, nor for an active turn whose job was
    // lost (issue 13): queue one so a worker closes the turn. A running turn's job stays queued
    // until it is acked, after the session went idle.
    if (row.status === 'waiting_for_tool_results' || (await bus.turns.queued(sessionId)) === null) {
      await bus.turns
        .enqueue(resumeJob(sessionId, { org_id: row.organization_id, ...turn, traceparent: trace.traceparent() }))
        .catch((err: unknown) => {
          if (!(err instanceof SessionBusyError)) throw err;
        });
    }
  }

  return cancel;
}
