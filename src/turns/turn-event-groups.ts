/** Events the turn writes together, built in one place for every writer that needs them. */
import type { NewTypedEvent } from '../../schemas/events.js';
import {
  CANCEL_INPUT_TEXT,
  textPart,
  turnEvents,
  type GenerationFacts,
  type ModelRef,
  type StoredMessage,
  type TurnRef,
  type Usage,
} from './turn-events.js';

/**
 * What follows a step's `output.message.completed`: `llm.generation` and `reason.completed`.
 * The decider builds the same pair from a stored `output.message.completed` whose followers
 * were lost (a partly stored append), so both paths share this.
 */
export function stepClosingEvents(
  newId: () => string,
  turn: TurnRef,
  s: { iteration: number; model: ModelRef; toolCalls: number; generation: GenerationFacts },
  missing: { generation: boolean; reasonCompleted: boolean } = { generation: true, reasonCompleted: true },
): (NewTypedEvent<'llm.generation'> | NewTypedEvent<'reason.completed'>)[] {
  const { stop_reason, duration_ms, usage } = s.generation;
  const events: (NewTypedEvent<'llm.generation'> | NewTypedEvent<'reason.completed'>)[] = [];
  if (missing.generation)
    events.push(turnEvents.llmGeneration(newId(), turn, { iteration: s.iteration, model: s.model, usage, stop_reason, duration_ms }));
  if (missing.reasonCompleted) events.push(turnEvents.reasonCompleted(newId(), turn, s.iteration, stop_reason, s.toolCalls));
  return events;
}

/**
 * A cancel's events (spec 3.2 steps 1-2): `turn.cancelled` and the user's cancel message. The
 * API appends them for a turn that began; the turn's worker, for one cancelled before it began.
 */
export function cancelEvents(
  newId: () => string,
  turn: TurnRef,
  usage: Usage,
): [NewTypedEvent<'turn.cancelled'>, NewTypedEvent<'input.message'>] {
  const inputId = newId();
  const message: StoredMessage = {
    id: inputId,
    role: 'user',
    content: [textPart(CANCEL_INPUT_TEXT)],
    created_at: new Date().toISOString(),
  };
  return [turnEvents.turnCancelled(newId(), turn, usage), turnEvents.inputMessage(newId(), message, turn)];
}
