/**
 * The event catalogue (spec 6.2 and this project's additions): one schema per event type, the
 * discriminated union `SessionEvent` by `type`, and the shape a writer hands to the log
 * (`NewSessionEvent`). The turn engine's builders (src/turns/turn-events.ts) produce these types;
 * the decider, the transcript, the messages view and the client read them. The log itself stores
 * any event (src/bus/ports.ts): what it holds was written through this catalogue.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import type { EventType } from './event-types.js';
import { Timestamp, Uuid } from './common.js';

const Id = Type.String({ minLength: 1 });
const TurnId = Type.String({ description: 'The turn this event belongs to.' });
const Iteration = Type.Integer({ minimum: 1, description: 'The reason/act step of the turn, from 1.' });
const Model = Type.String({ description: 'The vendor model name the step ran on.' });

/** Correlation ids of spec 2.5; `{}` for events outside a turn. */
export const EventContext = Type.Object(
  {
    turn_id: Type.Optional(Type.String()),
    input_message_id: Type.Optional(Type.String()),
    exec_id: Type.Optional(Type.String({ description: 'One tool execution (tool.started / tool.completed).' })),
    trace_id: Type.Optional(Type.String()),
    span_id: Type.Optional(Type.String()),
    parent_span_id: Type.Optional(Type.String()),
  },
  { $id: 'EventContext' },
);

/** A content part of a stored message (spec 2.4): `text`, `image`, `tool_call`, … */
export const MessagePart = Type.Intersect([Type.Object({ type: Type.String() }), Type.Record(Type.String(), Type.Unknown())]);

/** A message as the log keeps it (spec 2.4). */
export const StoredMessage = Type.Object({
  id: Id,
  role: Type.Union([Type.Literal('user'), Type.Literal('agent')]),
  content: Type.Array(MessagePart),
  created_at: Timestamp,
  controls: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  tags: Type.Optional(Type.Array(Type.String())),
  metadata: Type.Optional(
    Type.Record(Type.String(), Type.Unknown(), { description: 'Request metadata of a user message (earlier public API), kept as sent.' }),
  ),
  thinking: Type.Optional(Type.String()),
});

/** Token usage of one call or a turn (`output.message.completed` shows the first two). */
export const Usage = Type.Object({
  input_tokens: Type.Integer({ minimum: 0 }),
  output_tokens: Type.Integer({ minimum: 0 }),
  cache_read_tokens: Type.Integer({ minimum: 0 }),
});

/** What a tool that ran a turn of its own (a sub-agent) adds to its `tool.completed`. */
const NestedTurn = {
  child_session_id: Type.Optional(Type.Intersect([Uuid], { description: 'Sub-agents: the child session the call ran a turn in.' })),
  usage: Type.Optional(
    Type.Intersect([Usage], {
      description: "Sub-agents: the child turn's usage (its own children's included), counted in this turn's usage.",
    }),
  ),
};

export const ToolCall = Type.Object({ id: Id, name: Type.String(), arguments: Type.Record(Type.String(), Type.Unknown()) });

/** The model a step ran on. */
export const ModelRef = Type.Object({
  model: Model,
  model_id: Type.Union([Type.String(), Type.Null()]),
  provider_id: Type.Union([Type.String(), Type.Null()]),
});

export const TurnErrorCode = Type.Union([
  Type.Literal('llm_error'),
  Type.Literal('max_iterations'),
  Type.Literal('internal_error'),
  Type.Literal('invalid_structured_output'),
  Type.Literal('nothing_to_compact'),
]);

const TurnIds = { turn_id: TurnId, input_message_id: Type.String() };

/** Each event type's `data`, by type. */
export const eventData = {
  'session.created': Type.Object({ harness_id: Uuid, agent_id: Type.Union([Uuid, Type.Null()]) }),
  'session.started': Type.Object({}),
  'session.activated': Type.Object(TurnIds),
  'session.idled': Type.Object({
    turn_id: TurnId,
    iterations: Type.Integer({ minimum: 0 }),
    usage: Type.Intersect([Usage], { description: 'Cumulative for the session.' }),
  }),
  'input.message': Type.Object({ message: StoredMessage }),
  'input.queued': Type.Object({
    queued_id: Uuid,
    position: Type.Integer({ minimum: 1, description: 'Its place in the queue when it arrived (1 runs next).' }),
    on_busy: Type.Union([Type.Literal('enqueue'), Type.Literal('interrupt')]),
  }),
  'input.dequeued': Type.Object({
    queued_id: Uuid,
    reason: Type.Union([Type.Literal('started'), Type.Literal('cancelled')], {
      description: "`started`: its turn begins (the turn's input.message follows); `cancelled`: removed by a user.",
    }),
    turn_id: Type.Optional(TurnId),
  }),
  'turn.started': Type.Object({
    ...TurnIds,
    user_id: Type.Optional(Type.String({ description: 'Who sent the message; absent for the scheduler.' })),
    kind: Type.Optional(
      Type.Literal('compaction', {
        description:
          'A compaction on demand (POST …/compact): the turn summarises the history and stores `session.compacted` instead of calling tools; it has no input message (`input_message_id` is the turn id). Absent for a message turn.',
      }),
    ),
  }),
  'turn.completed': Type.Object({
    turn_id: TurnId,
    iterations: Type.Integer({ minimum: 0 }),
    duration_ms: Type.Number({ minimum: 0 }),
    usage: Usage,
  }),
  'turn.failed': Type.Object({
    turn_id: TurnId,
    error: Type.String(),
    error_code: TurnErrorCode,
    iterations: Type.Integer({ minimum: 0 }),
  }),
  'turn.cancelled': Type.Object({ turn_id: TurnId, reason: Type.Literal('user_requested'), usage: Usage }),
  'reason.started': Type.Object({ turn_id: TurnId, iteration: Iteration }),
  'reason.completed': Type.Object({
    turn_id: TurnId,
    iteration: Iteration,
    stop_reason: Type.String(),
    tool_calls: Type.Integer({ minimum: 0, description: 'How many tools the step asked for.' }),
  }),
  'reason.thinking.started': Type.Object({ turn_id: TurnId, model: Model }),
  'reason.thinking.delta': Type.Object({ turn_id: TurnId, delta: Type.String(), accumulated: Type.String() }),
  'reason.thinking.completed': Type.Object({ turn_id: TurnId, thinking: Type.String() }),
  'output.message.started': Type.Object({ turn_id: TurnId, model: Model, iteration: Iteration }),
  'output.message.delta': Type.Object({ turn_id: TurnId, delta: Type.String(), accumulated: Type.String() }),
  'output.message.completed': Type.Object({
    message: StoredMessage,
    metadata: ModelRef,
    usage: Type.Object({ input_tokens: Type.Integer({ minimum: 0 }), output_tokens: Type.Integer({ minimum: 0 }) }),
    parsed: Type.Optional(
      Type.Unknown({ description: "With `controls.response_format`: the final reply's JSON value, valid against the schema." }),
    ),
    structured_output_errors: Type.Optional(
      Type.Array(Type.String(), {
        description: 'With `controls.response_format`: why the reply did not validate (the turn then repairs once, or fails).',
      }),
    ),
  }),
  'act.started': Type.Object({
    turn_id: TurnId,
    iteration: Iteration,
    tool_calls: Type.Array(Type.Object({ id: Id, name: Type.String() })),
  }),
  'act.completed': Type.Object({
    turn_id: TurnId,
    iteration: Iteration,
    succeeded: Type.Integer({ minimum: 0 }),
    failed: Type.Integer({ minimum: 0 }),
  }),
  'tool.started': Type.Object({ tool_call: ToolCall, display_name: Type.String() }),
  'tool.completed': Type.Union([
    Type.Object({
      tool_call_id: Id,
      tool_name: Type.String(),
      display_name: Type.String(),
      success: Type.Literal(true),
      status: Type.Literal('success'),
      result: Type.Array(MessagePart),
      duration_ms: Type.Number({ minimum: 0 }),
      ...NestedTurn,
    }),
    Type.Object({
      tool_call_id: Id,
      tool_name: Type.String(),
      display_name: Type.String(),
      success: Type.Literal(false),
      status: Type.Literal('error'),
      error: Type.String(),
      duration_ms: Type.Optional(Type.Number({ minimum: 0 })),
      ...NestedTurn,
    }),
  ]),
  'subagent.started': Type.Object({
    tool_call_id: Id,
    agent_id: Uuid,
    child_session_id: Type.Intersect([Uuid], { description: 'The child session: its own SSE stream shows the whole turn.' }),
    child_turn_id: Type.String({ description: "The child's turn this tool call waits for." }),
  }),
  'tool.call_requested': Type.Object({
    tool_calls: Type.Array(ToolCall, { description: 'Client tools the caller must run (POST …/tool-results).' }),
  }),
  'tool.approval_requested': Type.Object({
    tool_calls: Type.Array(ToolCall, {
      description: 'Server tool calls that wait for a person (POST …/approvals); arguments as the LLM gave them, secrets redacted.',
    }),
    deciders: Type.Object(
      {
        session_owner: Type.String({ description: 'The user who created the session.' }),
        org_role: Type.Literal('admin', { description: 'Any admin of the organisation may decide too.' }),
      },
      { description: 'Who may approve or deny (the session access rule, decision 0018).' },
    ),
  }),
  'tool.approval_decided': Type.Object({
    tool_call_id: Id,
    tool_name: Type.String(),
    approved: Type.Boolean(),
    reason: Type.Optional(Type.String({ description: "A denial's reason: the tool's error result the LLM sees." })),
    decided_by: Type.String({ description: 'The user who decided.' }),
  }),
  'llm.generation': Type.Object({
    turn_id: TurnId,
    iteration: Iteration,
    ...ModelRef.properties,
    stop_reason: Type.String(),
    duration_ms: Type.Number({ minimum: 0 }),
    usage: Usage,
  }),
  'session.compacted': Type.Object({
    summary: Type.String({ description: 'What the model is given in place of the history up to the boundary.' }),
    up_to_event_id: Type.String({
      description:
        'The boundary: the event that opened the last history entry summarised (a user message, or a step whose tool results go with it). Later requests hold the summary and what follows this entry, verbatim.',
    }),
    tokens_before: Type.Integer({ minimum: 0, description: 'The request size before compaction (counted or estimated).' }),
    tokens_after: Type.Integer({ minimum: 0, description: 'The request size after compaction (counted or estimated).' }),
    reason: Type.Union([Type.Literal('threshold'), Type.Literal('context_length'), Type.Literal('manual')], {
      description:
        '`threshold`: the request passed the threshold; `context_length`: the vendor refused it as too long; `manual`: POST …/compact.',
    }),
    ...ModelRef.properties,
    usage: Usage,
  }),
} satisfies Record<EventType, TSchema>;

type EventDataSchemas = typeof eventData;
/** The streamed deltas: readers derive their `accumulated` (src/events/delta-text.ts). */
export type DeltaEventType = 'output.message.delta' | 'reason.thinking.delta';
/**
 * Each event type's `data` as the log holds it. A delta is stored without its `accumulated`
 * (storing the text so far made a reply cost the square of its length, issue 30 item 2): in the
 * log it is optional; every delta a reader is served (listing, SSE) has it, as `eventData` says.
 */
export type EventData<T extends EventType> = T extends DeltaEventType
  ? Omit<Static<EventDataSchemas[T]>, 'accumulated'> & { accumulated?: string }
  : Static<EventDataSchemas[T]>;

/** A stored event of type T (spec 2.5). */
export interface TypedEvent<T extends EventType> {
  id: string;
  type: T;
  ts: string;
  session_id: string;
  sequence: number;
  context: Static<typeof EventContext>;
  data: EventData<T>;
  metadata?: Record<string, unknown>;
  tags?: string[];
}

/** Every event a session log holds, discriminated by `type`. */
export type SessionEvent = { [T in EventType]: TypedEvent<T> }[EventType];

/** What a writer hands to the log for type T: the log stamps sequence, ts, session_id and, if absent, id. */
export interface NewTypedEvent<T extends EventType> {
  id?: string;
  type: T;
  context?: Static<typeof EventContext>;
  data: EventData<T>;
  metadata?: Record<string, unknown>;
  tags?: string[];
}

export type NewSessionEvent = { [T in EventType]: NewTypedEvent<T> }[EventType];

export type EventContextView = Static<typeof EventContext>;
export type StoredMessageView = Static<typeof StoredMessage>;
export type MessagePartView = Static<typeof MessagePart>;
export type UsageView = Static<typeof Usage>;
export type ToolCallView = Static<typeof ToolCall>;
export type ModelRefView = Static<typeof ModelRef>;
export type TurnErrorCodeView = Static<typeof TurnErrorCode>;
