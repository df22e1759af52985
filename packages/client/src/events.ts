import type { components, operations } from './generated/openapi.js';

type SseQuery = NonNullable<operations['get_sessions_by_id_sse']['parameters']['query']>;

/** Every event type, from the generated `types` filter of `GET /v1/sessions/{id}/sse`. */
export type EventType = Exclude<NonNullable<SseQuery['types']>[number], ''>;

export type Message = components['schemas']['Message'];
/** A part of a message's `content` (`text`, `image_file`, `tool_call`, `tool_result`, …). */
export type ContentPart = { type: string; text?: string; [key: string]: unknown };

export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens?: number;
  [key: string]: unknown;
}

export interface ToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
  [key: string]: unknown;
}

interface Delta {
  turn_id: string;
  delta: string;
  accumulated: string;
}

/**
 * The `data` of each event type, as the turn loop writes it (spec 6.2, actors/turn-events.ts).
 * A hand-kept map until the service publishes a typed event catalogue; then it is generated.
 */
export interface EventDataMap {
  'session.created': { harness_id?: string; agent_id?: string | null };
  'session.started': Record<string, never>;
  'session.activated': { turn_id: string; input_message_id: string };
  'session.idled': { turn_id: string; iterations: number; usage: Usage };
  'input.message': { message: Message };
  'turn.started': { turn_id: string; input_message_id: string; user_id?: string };
  'turn.completed': { turn_id: string; iterations: number; duration_ms: number; usage: Usage };
  'turn.failed': { turn_id: string; error: string; error_code: 'llm_error' | 'max_iterations' | 'internal_error' | (string & {}); iterations: number };
  'turn.cancelled': { turn_id: string; reason: string; usage: Usage };
  'reason.started': { turn_id: string; iteration: number };
  'reason.completed': { turn_id: string; iteration: number; stop_reason: string; tool_calls: number };
  'reason.thinking.started': { turn_id: string; model: string };
  'reason.thinking.delta': Delta;
  'reason.thinking.completed': { turn_id: string; thinking: string };
  'output.message.started': { turn_id: string; model: string; iteration: number };
  'output.message.delta': Delta;
  'output.message.completed': { message: Message; metadata: Record<string, unknown>; usage: Usage };
  'act.started': { turn_id: string; iteration: number; tool_calls: { id: string; name: string }[] };
  'act.completed': { turn_id: string; iteration: number; succeeded: number; failed: number };
  'tool.started': { tool_call: ToolCall; display_name: string };
  'tool.completed': {
    tool_call_id: string;
    tool_name: string;
    display_name: string;
    success: boolean;
    status: 'success' | 'error';
    result?: ContentPart[];
    error?: string;
    duration_ms?: number;
  };
  'tool.call_requested': { tool_calls: ToolCall[] };
  'llm.generation': { turn_id: string; iteration: number; stop_reason: string; duration_ms: number; usage: Usage; [key: string]: unknown };
}

/** Correlation ids of an event (spec 2.5); `{}` outside a turn. */
export interface EventContext {
  turn_id?: string;
  input_message_id?: string;
  exec_id?: string;
  trace_id?: string;
  span_id?: string;
  parent_span_id?: string;
  [key: string]: string | undefined;
}

type EventBase = Omit<components['schemas']['Event'], 'type' | 'data' | 'context'>;

/** One event of type `T`. */
export type SessionEventOf<T extends EventType> = EventBase & { type: T; context: EventContext; data: EventDataMap[T] };

/** A session event: a union discriminated by `type` (switch on it and `data` narrows). */
export type SessionEvent = { [T in EventType]: SessionEventOf<T> }[EventType];

/** Type guard: `isEvent(e, 'output.message.delta')` narrows `e`. */
export function isEvent<T extends EventType>(event: SessionEvent, type: T): event is Extract<SessionEvent, { type: T }> {
  return event.type === type;
}

/** The text parts of a message, joined. */
export function messageText(message: Pick<Message, 'content'> | undefined): string {
  if (!message) return '';
  return (message.content as ContentPart[]).filter((p) => p.type === 'text' && typeof p.text === 'string').map((p) => p.text).join('');
}
