/**
 * The vocabulary of a turn's events: the shapes the builders in turn-events.ts take and the
 * fixed texts the spec gives a turn's outcomes.
 */
import type { EventType } from '../../schemas/event-types.js';
import type {
  EventContextView as EventContext,
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

/** A final reply checked against the turn's response format (src/turns/structured-output.ts). */
export type StructuredReply = { parsed: unknown } | { errors: string[] };

/** `turn.failed` codes: spec 6.2 plus `internal_error` for a turn no worker could finish. */
export type TurnErrorCode = TurnErrorCodeView;

/** A text part, the common case of message content. */
export function textPart(text: string): MessagePart {
  return { type: 'text', text };
}

function contextOf(turn: TurnRef, extra: Partial<EventContext> = {}): EventContext {
  return { turn_id: turn.turn_id, input_message_id: turn.input_message_id, ...extra };
}

/** `context` and `tags` of an event of the turn: the message's tags, then the event's own. */
export function on(
  turn: TurnRef,
  extra: Partial<EventContext> = {},
  own: readonly string[] = [],
): Pick<NewTypedEvent<EventType>, 'context' | 'tags'> {
  const tags = [...new Set([...(turn.tags ?? []), ...own])];
  return tags.length ? { context: contextOf(turn, extra), tags } : { context: contextOf(turn, extra) };
}
