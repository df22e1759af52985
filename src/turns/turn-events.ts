/**
 * Builders for every event the turn engine writes (spec 6.2), so each event's data shape
 * lives in exactly one place. Pure: ids and timestamps come in as arguments.
 */
import type { EventType } from '../../schemas/event-types.js';
import type {
  EventContextView as EventContext,
  EventData,
  MessagePartView,
  ModelRefView,
  NewTypedEvent,
  StoredMessageView,
  ToolCallView,
  TurnErrorCodeView,
  UsageView,
} from '../../schemas/events.js';

/** The model a step ran on, as reported in `output.message.completed` metadata. */
export type ModelRef = ModelRefView;
export type ToolCallRef = ToolCallView;
/** Content parts of a stored message (spec 2.4). */
export type MessagePart = MessagePartView;
export type StoredMessage = StoredMessageView;

export type Usage = UsageView;

export const ZERO_USAGE: Usage = Object.freeze({ input_tokens: 0, output_tokens: 0, cache_read_tokens: 0 });

export function addUsage(a: Usage, b: Partial<Usage> | undefined): Usage {
  return {
    input_tokens: a.input_tokens + (b?.input_tokens ?? 0),
    output_tokens: a.output_tokens + (b?.output_tokens ?? 0),
    cache_read_tokens: a.cache_read_tokens + (b?.cache_read_tokens ?? 0),
  };
}

/** A delta as the turn stores it: its data without `accumulated`, which readers derive. */
export type StoredDeltaEvent<T extends 'output.message.delta' | 'reason.thinking.delta'> = Omit<NewTypedEvent<T>, 'data'> & {
  data: Omit<NewTypedEvent<T>['data'], 'accumulated'>;
};

/** What identifies a turn on every one of its events (`context`). */
export interface TurnRef {
  turn_id: string;
  input_message_id: string;
  /** The input message's tags (spec 2.5), carried by every event of the turn. */
  tags?: string[];
}

/** How one LLM call ended: the facts `llm.generation` and `reason.completed` report beyond the message. */
export interface GenerationFacts {
  stop_reason: string;
  duration_ms: number;
  usage: Usage;
}

/** What a tool that ran a turn of its own (a sub-agent) reports with its outcome. */
export interface NestedTurn {
  child_session_id?: string;
  usage?: Usage;
}

function nestedOf(n: NestedTurn | undefined): NestedTurn {
  if (!n) return {};
  return { ...(n.child_session_id ? { child_session_id: n.child_session_id } : {}), ...(n.usage ? { usage: { ...n.usage } } : {}) };
}

/** Where a tool comes from: its capability id, `client` for a client tool (spec 2.2), null when unknown. */
export type ToolSource = string | null;

/** Tags of a tool's events: `tool:<name>` and `capability:<id>` (or `client_tool`). */
export function toolTags(name: string, source: ToolSource): string[] {
  if (source === CLIENT_TOOL_SOURCE) return [`tool:${name}`, 'client_tool'];
  return source ? [`tool:${name}`, `capability:${source}`] : [`tool:${name}`];
}

export const CLIENT_TOOL_SOURCE = 'client';

/** Text shown to the user when a cancelled turn stops (spec 3.2 step 4). */
export const CANCELLED_OUTPUT_TEXT = 'Work was cancelled by user.';
/** The user message the API records on cancel (spec 3.2 step 2). */
export const CANCEL_INPUT_TEXT = 'User requested to cancel the work.';
/** Result of a tool that was running when its worker died (architecture 4). */
export const INTERRUPTED_TOOL_ERROR = 'Tool execution was interrupted';
export const CANCELLED_TOOL_ERROR = 'Tool execution was cancelled';
/** Result of a call the tool approval policy denies (decision 0101): the LLM sees it, no one is asked. */
export const POLICY_DENIED_TOOL_ERROR = 'Tool call refused: this tool is denied by the tool approval policy';
/** Result of a call a person denied without giving a reason. */
export const DENIED_TOOL_ERROR = 'Tool call denied by the user';

function ctx(turn: TurnRef, extra: Partial<EventContext> = {}): EventContext {
  return { turn_id: turn.turn_id, input_message_id: turn.input_message_id, ...extra };
}

/** `context` and `tags` of an event of the turn: the message's tags, then the event's own. */
function on(
  turn: TurnRef,
  extra: Partial<EventContext> = {},
  own: readonly string[] = [],
): Pick<NewTypedEvent<EventType>, 'context' | 'tags'> {
  const tags = [...new Set([...(turn.tags ?? []), ...own])];
  return tags.length ? { context: ctx(turn, extra), tags } : { context: ctx(turn, extra) };
}

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
  actStarted(
    id: string,
    turn: TurnRef,
    iteration: number,
    calls: ToolCallRef[],
    sourceOf: (name: string) => ToolSource = () => null,
  ): NewTypedEvent<'act.started'> {
    return {
      id,
      type: 'act.started',
      ...on(
        turn,
        {},
        calls.flatMap((c) => toolTags(c.name, sourceOf(c.name))),
      ),
      data: { turn_id: turn.turn_id, iteration, tool_calls: calls.map((c) => ({ id: c.id, name: c.name })) },
    };
  },
  actCompleted(id: string, turn: TurnRef, iteration: number, succeeded: number, failed: number): NewTypedEvent<'act.completed'> {
    return { id, type: 'act.completed', ...on(turn), data: { turn_id: turn.turn_id, iteration, succeeded, failed } };
  },
  toolStarted(
    id: string,
    turn: TurnRef,
    execId: string,
    call: ToolCallRef,
    displayName: string,
    source: ToolSource = null,
  ): NewTypedEvent<'tool.started'> {
    return {
      id,
      type: 'tool.started',
      ...on(turn, { exec_id: execId }, toolTags(call.name, source)),
      data: { tool_call: call, display_name: displayName },
    };
  },
  toolSucceeded(
    id: string,
    turn: TurnRef,
    execId: string,
    t: { call: ToolCallRef; display_name: string; result: MessagePart[]; duration_ms: number; source?: ToolSource; nested?: NestedTurn },
  ): NewTypedEvent<'tool.completed'> {
    return {
      id,
      type: 'tool.completed',
      ...on(turn, { exec_id: execId }, toolTags(t.call.name, t.source ?? null)),
      data: {
        tool_call_id: t.call.id,
        tool_name: t.call.name,
        display_name: t.display_name,
        success: true,
        status: 'success',
        result: t.result,
        duration_ms: t.duration_ms,
        ...nestedOf(t.nested),
      },
    };
  },
  toolFailed(
    id: string,
    turn: TurnRef,
    execId: string,
    t: {
      call: Pick<ToolCallRef, 'id' | 'name'>;
      display_name: string;
      error: string;
      duration_ms?: number;
      source?: ToolSource;
      nested?: NestedTurn;
    },
  ): NewTypedEvent<'tool.completed'> {
    const data: EventData<'tool.completed'> = {
      tool_call_id: t.call.id,
      tool_name: t.call.name,
      display_name: t.display_name,
      success: false,
      status: 'error',
      error: t.error,
      ...(t.duration_ms !== undefined ? { duration_ms: t.duration_ms } : {}),
      ...nestedOf(t.nested),
    };
    return { id, type: 'tool.completed', ...on(turn, { exec_id: execId }, toolTags(t.call.name, t.source ?? null)), data };
  },
  toolCallRequested(id: string, turn: TurnRef, calls: ToolCallRef[]): NewTypedEvent<'tool.call_requested'> {
    return {
      id,
      type: 'tool.call_requested',
      ...on(
        turn,
        {},
        calls.flatMap((c) => toolTags(c.name, CLIENT_TOOL_SOURCE)),
      ),
      data: { tool_calls: calls },
    };
  },
  subagentStarted(id: string, turn: TurnRef, execId: string, data: EventData<'subagent.started'>): NewTypedEvent<'subagent.started'> {
    return { id, type: 'subagent.started', ...on(turn, { exec_id: execId }), data };
  },
  /** Server tool calls that wait for a person's decision (decision 0101). */
  toolApprovalRequested(
    id: string,
    turn: TurnRef,
    calls: ToolCallRef[],
    sessionOwner: string,
    sourceOf: (name: string) => ToolSource = () => null,
  ): NewTypedEvent<'tool.approval_requested'> {
    return {
      id,
      type: 'tool.approval_requested',
      ...on(
        turn,
        {},
        calls.flatMap((c) => toolTags(c.name, sourceOf(c.name))),
      ),
      data: { tool_calls: calls, deciders: { session_owner: sessionOwner, org_role: 'admin' } },
    };
  },
  /** A person approved or denied one waiting call (appended by the API, folded by the worker). */
  toolApprovalDecided(
    id: string,
    turn: TurnRef,
    d: { call: Pick<ToolCallRef, 'id' | 'name'>; approved: boolean; reason?: string; decided_by: string },
  ): NewTypedEvent<'tool.approval_decided'> {
    const data: EventData<'tool.approval_decided'> = {
      tool_call_id: d.call.id,
      tool_name: d.call.name,
      approved: d.approved,
      ...(d.reason !== undefined ? { reason: d.reason } : {}),
      decided_by: d.decided_by,
    };
    return { id, type: 'tool.approval_decided', ...on(turn, {}, toolTags(d.call.name, null)), data };
  },
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

/** A final reply checked against the turn's response format (src/turns/structured-output.ts). */
export type StructuredReply = { parsed: unknown } | { errors: string[] };

/** `turn.failed` codes: spec 6.2 plus `internal_error` for a turn no worker could finish. */
export type TurnErrorCode = TurnErrorCodeView;

/** A text part, the common case of message content. */
export function textPart(text: string): MessagePart {
  return { type: 'text', text };
}
