/**
 * Builders for every event the turn engine writes (spec 6.2), so each event's data shape
 * lives in exactly one place; those of act steps and tool calls are in tool-events.ts. Pure:
 * ids and timestamps come in as arguments. The types and texts they speak are in turn-terms.ts,
 * exported from here too.
 */
import type { EventData, NewTypedEvent } from '../../schemas/events.js';
import {
  type GenerationFacts,
  type ModelRef,
  on,
  type StoredDeltaEvent,
  type StoredMessage,
  type StructuredReply,
  type TurnErrorCode,
  type TurnRef,
  type Usage,
} from './turn-terms.js';
import { toolEvents } from './tool-events.js';

export * from './turn-terms.js';

export const turnEvents = {
  inputMessage(id: string, message: StoredMessage, turn?: TurnRef): NewTypedEvent<'input.message'> {
    return { id, type: 'input.message', ...(turn ? on(turn) : { context: {} }), data: { message } };
  },
  /** A message sent while a turn ran waits in the session's queue; the log mints its id (after its tail). */
  inputQueued(queuedId: string, position: number, onBusy: 'enqueue' | 'interrupt'): NewTypedEvent<'input.queued'> {
    return { type: 'input.queued', context: {}, data: { queued_id: queuedId, position, on_busy: onBusy } };
  },
  /** A queued message leaves the queue: its turn begins (the worker writes it first in the preamble) or a user cancelled it. */
  inputDequeued(id: string | undefined, queuedId: string, turn?: TurnRef): NewTypedEvent<'input.dequeued'> {
    if (!turn) return { type: 'input.dequeued', context: {}, data: { queued_id: queuedId, reason: 'cancelled' } };
    return {
      ...(id ? { id } : {}),
      type: 'input.dequeued',
      ...on(turn),
      data: { queued_id: queuedId, reason: 'started', turn_id: turn.turn_id },
    };
  },
  sessionStarted(id: string, turn: TurnRef): NewTypedEvent<'session.started'> {
    return { id, type: 'session.started', ...on(turn), data: {} };
  },
  /**
   * `user_id`: who sent the message (absent for the scheduler); a resumed turn acts for them only
   * if they resume it. `kind`: `compaction` for a compaction on demand.
   */
  turnStarted(id: string, turn: TurnRef, userId?: string, kind?: 'compaction'): NewTypedEvent<'turn.started'> {
    const data = {
      turn_id: turn.turn_id,
      input_message_id: turn.input_message_id,
      ...(userId ? { user_id: userId } : {}),
      ...(kind ? { kind } : {}),
    };
    return { id, type: 'turn.started', ...on(turn), data };
  },
  sessionActivated(id: string, turn: TurnRef): NewTypedEvent<'session.activated'> {
    return { id, type: 'session.activated', ...on(turn), data: { turn_id: turn.turn_id, input_message_id: turn.input_message_id } };
  },
  reasonStarted(id: string, turn: TurnRef, iteration: number): NewTypedEvent<'reason.started'> {
    return { id, type: 'reason.started', ...on(turn), data: { turn_id: turn.turn_id, iteration } };
  },
  outputStarted(id: string, turn: TurnRef, model: string, iteration: number): NewTypedEvent<'output.message.started'> {
    return { id, type: 'output.message.started', ...on(turn), data: { turn_id: turn.turn_id, model, iteration } };
  },
  /** Stored without `accumulated`: readers derive it (src/events/delta-text.ts), so a reply costs its length, not its square. */
  outputDelta(id: string, turn: TurnRef, delta: string): StoredDeltaEvent<'output.message.delta'> {
    return { id, type: 'output.message.delta', ...on(turn), data: { turn_id: turn.turn_id, delta } };
  },
  thinkingStarted(id: string, turn: TurnRef, model: string): NewTypedEvent<'reason.thinking.started'> {
    return { id, type: 'reason.thinking.started', ...on(turn), data: { turn_id: turn.turn_id, model } };
  },
  /** Stored without `accumulated`, as `outputDelta`. */
  thinkingDelta(id: string, turn: TurnRef, delta: string): StoredDeltaEvent<'reason.thinking.delta'> {
    return { id, type: 'reason.thinking.delta', ...on(turn), data: { turn_id: turn.turn_id, delta } };
  },
  thinkingCompleted(id: string, turn: TurnRef, thinking: string): NewTypedEvent<'reason.thinking.completed'> {
    return { id, type: 'reason.thinking.completed', ...on(turn), data: { turn_id: turn.turn_id, thinking } };
  },
  /**
   * The agent's message of one step; tool calls are `tool_call` parts. `provider_state`
   * (opaque vendor continuation data) rides in the event metadata, not in the message, and so
   * does `generation`: what the step's `llm.generation` and `reason.completed` report, so a
   * later attempt can write them when only this event of the step's closing set was stored.
   */
  outputCompleted(
    id: string,
    turn: TurnRef,
    m: {
      message: StoredMessage;
      model: ModelRef;
      usage: Usage;
      provider_state?: string;
      cancellation?: boolean;
      generation?: GenerationFacts;
      /** The reply checked against the turn's response format: its value, or why it is not one. */
      structured?: StructuredReply;
    },
  ): NewTypedEvent<'output.message.completed'> {
    const metadata = {
      ...(m.provider_state ? { provider_state: m.provider_state } : {}),
      ...(m.cancellation ? { cancellation: true } : {}),
      ...(m.generation ? { generation: m.generation } : {}),
    };
    const event: NewTypedEvent<'output.message.completed'> = {
      id,
      type: 'output.message.completed',
      ...on(turn),
      data: {
        message: m.message,
        metadata: { ...m.model },
        usage: { input_tokens: m.usage.input_tokens, output_tokens: m.usage.output_tokens },
        ...(m.structured && 'parsed' in m.structured ? { parsed: m.structured.parsed } : {}),
        ...(m.structured && 'errors' in m.structured ? { structured_output_errors: m.structured.errors } : {}),
      },
    };
    if (Object.keys(metadata).length) event.metadata = metadata;
    return event;
  },
  llmGeneration(
    id: string,
    turn: TurnRef,
    g: { iteration: number; model: ModelRef; usage: Usage; stop_reason: string; duration_ms: number },
  ): NewTypedEvent<'llm.generation'> {
    return {
      id,
      type: 'llm.generation',
      ...on(turn),
      data: {
        turn_id: turn.turn_id,
        iteration: g.iteration,
        ...g.model,
        stop_reason: g.stop_reason,
        duration_ms: g.duration_ms,
        usage: g.usage,
      },
      metadata: { usage: g.usage },
    };
  },
  reasonCompleted(id: string, turn: TurnRef, iteration: number, stopReason: string, toolCalls: number): NewTypedEvent<'reason.completed'> {
    return {
      id,
      type: 'reason.completed',
      ...on(turn),
      data: { turn_id: turn.turn_id, iteration, stop_reason: stopReason, tool_calls: toolCalls },
    };
  },
  /** Tagged with every tool of the batch (`sourceOf` names each one's capability). */
  ...toolEvents,
  turnCompleted(id: string, turn: TurnRef, t: { iterations: number; duration_ms: number; usage: Usage }): NewTypedEvent<'turn.completed'> {
    return { id, type: 'turn.completed', ...on(turn), data: { turn_id: turn.turn_id, ...t } };
  },
  turnFailed(id: string, turn: TurnRef, t: { error: string; error_code: TurnErrorCode; iterations: number }): NewTypedEvent<'turn.failed'> {
    return { id, type: 'turn.failed', ...on(turn), data: { turn_id: turn.turn_id, ...t } };
  },
  turnCancelled(id: string, turn: TurnRef, usage: Usage): NewTypedEvent<'turn.cancelled'> {
    return { id, type: 'turn.cancelled', ...on(turn), data: { turn_id: turn.turn_id, reason: 'user_requested', usage } };
  },
  sessionIdled(id: string, turn: TurnRef, t: { iterations: number; usage: Usage }): NewTypedEvent<'session.idled'> {
    return { id, type: 'session.idled', ...on(turn), data: { turn_id: turn.turn_id, ...t } };
  },
  /** The history up to a boundary replaced by a summary (issue 26); `turn`: the turn it ran in, if any. */
  sessionCompacted(id: string, turn: TurnRef | null, data: EventData<'session.compacted'>): NewTypedEvent<'session.compacted'> {
    return { id, type: 'session.compacted', ...(turn ? on(turn) : { context: {} }), data };
  },
};
