/** POST tool-results: client tool results for a turn suspended on them (spec 4.2). */
import type { NewSessionEvent } from '../../../schemas/events.js';
import type { ClientToolResultInput } from '../../../schemas/turns.js';
import { ConflictError, InvalidRequestError } from '../../errors.js';
import { newId } from '../../ids.js';
import { stampEvents } from '../../observability/index.js';
import { CLIENT_TOOL_SOURCE, foldTurn, outstandingOf, textPart, turnEvents, type TurnRef } from '../../turns/index.js';
import { createResumeTurn } from './resume-turn.js';
import type { TurnApiContext, TurnPrincipal } from './turn-api-context.js';
import { readTurnSoFar } from './turn-so-far.js';

export function createToolResults(ctx: TurnApiContext) {
  const { bus, status, span, owned } = ctx;
  const resumeTurn = createResumeTurn(ctx);

  /**
   * Client tool results for the suspended turn. Unknown call ids → 400; a session that is not
   * waiting → 409. Results for calls answered already are ignored. When the last one is in,
   * the turn is queued again.
   */
  async function submitToolResults(
    principal: TurnPrincipal,
    sessionId: string,
    results: ClientToolResultInput[],
  ): Promise<{ accepted: number; status: string }> {
    const row = await owned(principal, sessionId);
    const turnId = row.current_turn_id;
    if (row.status !== 'waiting_for_tool_results' || !turnId) throw new ConflictError('Session is not waiting for tool results');
    let accepted = 0;
    const trace = span();
    for (let attempt = 0; ; attempt++) {
      const soFar = await readTurnSoFar(bus, sessionId, turnId);
      if (!soFar) throw new ConflictError('Session is not waiting for tool results');
      const { turn, events, lastSequence, startedBy } = soFar;
      const step = foldTurn(turn, events).steps.at(-1);
      const requested = step?.requested ?? new Set<string>();
      const unknown = results.find((r) => !requested.has(r.tool_call_id));
      if (unknown) throw new InvalidRequestError('Invalid request: unknown tool_call_id');
      const open = new Set([...requested].filter((id) => !step!.completed.has(id)));
      const fresh = dedupe(results.filter((r) => open.has(r.tool_call_id)));
      const calls = new Map(step!.toolCalls.map((c) => [c.id, c]));
      const resultEvents = fresh.map((r) => clientResultEvent(turn, calls.get(r.tool_call_id)!.name, r));
      stampEvents(resultEvents, trace);
      const appended = await bus.events.append(sessionId, resultEvents, { expectedSequence: lastSequence });
      if (!appended.ok) {
        if (attempt < 20) continue; // another writer got in first: fold again and retry
        throw new ConflictError('Session is busy');
      }
      accepted = fresh.length;
      // Resumed once nothing is outstanding: calls waiting for an approval keep the turn waiting.
      const waiting = outstandingOf(step);
      const complete = fresh.length === open.size && waiting.approvals.length === 0;
      if (complete) await resumeTurn(principal, row, { turn, startedBy }, trace);
      break;
    }
    const now = await status.read(sessionId);
    return { accepted, status: now?.status ?? 'idle' };
  }

  return submitToolResults;
}

function dedupe(results: ClientToolResultInput[]): ClientToolResultInput[] {
  const seen = new Map<string, ClientToolResultInput>();
  for (const r of results) if (!seen.has(r.tool_call_id)) seen.set(r.tool_call_id, r);
  return [...seen.values()];
}

function clientResultEvent(turn: TurnRef, toolName: string, r: ClientToolResultInput): NewSessionEvent {
  const call = { id: r.tool_call_id, name: toolName };
  const source = CLIENT_TOOL_SOURCE;
  if (r.error !== undefined && r.error !== null)
    return turnEvents.toolFailed(newId(), turn, newId(), { call, display_name: toolName, error: r.error, source });
  const text = typeof r.result === 'string' ? r.result : r.result === undefined ? '' : JSON.stringify(r.result);
  return turnEvents.toolSucceeded(newId(), turn, newId(), {
    call: { ...call, arguments: {} },
    display_name: toolName,
    result: [textPart(text)],
    duration_ms: 0,
    source,
  });
}
