/**
 * POST approvals: a person approves or denies server tool calls that wait for one (decision
 * 0101). Each decision is a `tool.approval_decided` event; the worker folds it (an approved call
 * runs, a denied one gets the reason as its error result), so the log is the only record and a
 * redelivered or restarted turn sees every decision. Who may decide is who may reach the
 * session (`owned`: its owner and the organisation's admins, decision 0018).
 */
import type { ToolApprovalDecisionInput } from '../../../schemas/approvals.js';
import { ConflictError, InvalidRequestError } from '../../errors.js';
import { newId } from '../../ids.js';
import { stampEvents } from '../../observability/index.js';
import { foldTurn, outstandingOf, turnEvents } from '../../turns/index.js';
import { createResumeTurn } from './resume-turn.js';
import type { TurnApiContext, TurnPrincipal } from './turn-api-context.js';
import { readTurnSoFar } from './turn-so-far.js';

const NOT_WAITING = 'Session is not waiting for tool approvals';
/** Appends that lost a race with another writer before the request gives up (as tool-results). */
const MAX_APPEND_ATTEMPTS = 20;

export function createApprovals(ctx: TurnApiContext) {
  const { bus, status, span, owned } = ctx;
  const resumeTurn = createResumeTurn(ctx);

  /**
   * Decisions for the suspended turn's waiting calls. A call id that waits for no approval in
   * the turn → 400; a session that is not waiting → 409. A call decided already keeps its first
   * decision (accepted counts only new ones). Once nothing is outstanding the turn is queued again.
   */
  return async function submitApprovals(
    principal: TurnPrincipal,
    sessionId: string,
    decisions: ToolApprovalDecisionInput[],
  ): Promise<{ accepted: number; status: string }> {
    const row = await owned(principal, sessionId);
    const turnId = row.current_turn_id;
    if (row.status !== 'waiting_for_tool_results' || !turnId) throw new ConflictError(NOT_WAITING);
    const trace = span();
    for (let attempt = 1; ; attempt++) {
      const soFar = await readTurnSoFar(bus, sessionId, turnId);
      if (!soFar) throw new ConflictError(NOT_WAITING);
      const { turn, events, lastSequence } = soFar;
      const step = foldTurn(turn, events).steps.at(-1);
      if (!step || decisions.some((d) => !step.approvalRequested.has(d.tool_call_id)))
        throw new InvalidRequestError('Invalid request: unknown tool_call_id (no call of the waiting turn asks for approval)');
      const pending = outstandingOf(step).approvals;
      const isPending = new Set(pending);
      const fresh = firstPerCall(decisions.filter((d) => isPending.has(d.tool_call_id)));
      const calls = new Map(step.toolCalls.map((c) => [c.id, c]));
      const decided = fresh.map((d) =>
        turnEvents.toolApprovalDecided(newId(), turn, {
          call: calls.get(d.tool_call_id)!,
          approved: d.approved,
          ...(d.approved || d.reason === undefined ? {} : { reason: d.reason }),
          decided_by: principal.user_id ?? principal.org_id,
        }),
      );
      stampEvents(decided, trace);
      const appended = decided.length
        ? await bus.events.append(sessionId, decided, { expectedSequence: lastSequence })
        : { ok: true as const };
      if (!appended.ok) {
        if (attempt < MAX_APPEND_ATTEMPTS) continue; // another writer got in first: fold again and retry
        throw new ConflictError('Session is busy');
      }
      const stillPending = pending.filter((id) => !fresh.some((d) => d.tool_call_id === id));
      if (!stillPending.length && !outstandingOf(step).results.length) await resumeTurn(principal, row, soFar, trace);
      const now = await status.read(sessionId);
      return { accepted: fresh.length, status: now?.status ?? 'idle' };
    }
  };
}

function firstPerCall(decisions: ToolApprovalDecisionInput[]): ToolApprovalDecisionInput[] {
  const seen = new Map<string, ToolApprovalDecisionInput>();
  for (const d of decisions) if (!seen.has(d.tool_call_id)) seen.set(d.tool_call_id, d);
  return [...seen.values()];
}
