/**
 * Resuming a turn suspended on outside input (client tool results, approval decisions): once
 * nothing is outstanding, the session goes back to `active` and the turn is queued again.
 */
import type { TurnJob } from '../../bus/index.js';
import { SessionBusyError } from '../../errors.js';
import { retry, retryPolicies } from '../../retry/index.js';
import { resumeJob } from '../../turns/index.js';
import type { TurnApiContext, TurnPrincipal } from './turn-api-context.js';
import type { TurnSoFar } from './turn-so-far.js';
import type { TraceSpan } from '../../observability/index.js';

export function createResumeTurn({ bus, log, status }: TurnApiContext) {
  /**
   * The suspended turn's own job may not be acked yet (retryPolicies.suspendedTurnJob); if it
   * never is, its redelivery resumes the turn.
   */
  async function enqueueResume(job: TurnJob): Promise<void> {
    await retry(() => bus.turns.enqueue(job), retryPolicies.suspendedTurnJob, {
      retryable: (err) => err instanceof SessionBusyError,
    }).catch((err: unknown) => {
      if (!(err instanceof SessionBusyError)) throw err;
      log.warn({ sessionId: job.session_id }, 'resume not queued: a turn job is still queued');
    });
  }

  /** waiting → active and the turn queued again (once: markResumed lets one caller through). */
  return async function resumeTurn(
    principal: TurnPrincipal,
    row: { id: string; organization_id: string },
    soFar: Pick<TurnSoFar, 'turn' | 'startedBy'>,
    trace: TraceSpan,
  ): Promise<void> {
    const { turn, startedBy } = soFar;
    // The resumed turn acts for a user only when that user both sent its message and this input.
    const actingUser = principal.user_id && principal.user_id === startedBy ? { user_id: principal.user_id } : {};
    const resume = { org_id: row.organization_id, ...turn, ...actingUser, traceparent: trace.traceparent() };
    if (await status.markResumed(row.id, turn.turn_id)) await enqueueResume(resumeJob(row.id, resume));
  };
}
