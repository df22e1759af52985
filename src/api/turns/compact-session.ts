/**
 * POST /v1/sessions/{id}/compact (issue 26, docs/decisions/0103): a compaction on demand runs as
 * a turn of its own kind. Its job goes into the session's turn queue with its first events, so
 * it never runs beside a turn (a busy session answers 409, like a message), its worker is the
 * one writer of `session.compacted`, and POST …/cancel stops it by the spec's cancel flow.
 */
import type { CompactionAcceptedView } from '../../../schemas/compaction.js';
import { ConflictError, SessionBusyError } from '../../errors.js';
import { stampEvents } from '../../observability/index.js';
import { compactionPreamble, compactJob, mintCompactionTurn } from '../../turns/index.js';
import { BUSY_STATUSES, type TurnApiContext, type TurnPrincipal } from './turn-api-context.js';
import { createEnqueueTurn } from './enqueue-turn.js';

export function createCompactSession(ctx: TurnApiContext) {
  const { turnCap, span, ownedToStart } = ctx;
  const enqueueTurn = createEnqueueTurn(ctx);

  /** Queues the compaction turn; 409 while a turn runs or before the session's first message. */
  return async function compactSession(
    principal: TurnPrincipal,
    sessionId: string,
    instructions?: string,
  ): Promise<CompactionAcceptedView> {
    const row = await ownedToStart(principal, sessionId);
    if (BUSY_STATUSES.has(row.status)) throw new SessionBusyError();
    if (row.status === 'started') throw new ConflictError('Nothing to compact: the session has no messages yet');
    turnCap?.check(row.busyInOrg);
    const turn = mintCompactionTurn();
    const preamble = compactionPreamble(turn, principal.user_id);
    const trace = span();
    stampEvents(preamble, trace);
    const job = compactJob(sessionId, {
      org_id: row.organization_id,
      ...turn,
      ...(principal.user_id ? { user_id: principal.user_id } : {}),
      ...(instructions ? { instructions } : {}),
      preamble,
      traceparent: trace.traceparent(),
    });
    await enqueueTurn(job, row);
    return { session_id: sessionId, turn_id: turn.turn_id, status: 'active' };
  };
}
