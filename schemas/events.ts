/**
 * The event catalogue (spec 6.2 and this project's additions): one schema per event type, the
 * discriminated union `SessionEvent` by `type`, and the shape a writer hands to the log
 * (`NewSessionEvent`). The turn engine's builders (src/turns/turn-events.ts) produce these types;
 * the decider, the transcript, the messages view and the client read them. The log itself stores
 * any event (src/bus/ports.ts): what it holds was written through this catalogue.
 */
import { Type, type Static, type TLiteral, type TObject, type TSchema } from '@sinclair/typebox';
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

export const ToolCall = Type.Object({ id: Id, name: Type.String(), arguments: Type.Record(Type.String(), Type.Unknown()) });

/** The model a step ran on. */
export const ModelRef = Type.Object({
  model: Model,
  model_id: Type.Union([Type.String(), Type.Null()]),
  provider_id: Type.Union([Type.String(), Type.Null()]),
});

export const TurnErrorCode = Type.Union([Type.Literal('llm_error'), Type.Literal('max_iterations'), Type.Literal('internal_error')]);

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
  'turn.started': Type.Object({
    ...TurnIds,
    user_id: Type.Optional(Type.String({ description: 'Who sent the message; absent for the scheduler.' })),
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
    }),
    Type.Object({
      tool_call_id: Id,
      tool_name: Type.String(),
      display_name: Type.String(),
      success: Type.Literal(false),
      status: Type.Literal('error'),
      error: Type.String(),
      duration_ms: Type.Optional(Type.Number({ minimum: 0 })),
    }),
  ]),
  'tool.call_requested': Type.Object({
    tool_calls: Type.Array(ToolCall, { description: 'Client tools the caller must run (POST …/tool-results).' }),
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
export type EventData<T extends EventType> = Static<EventDataSchemas[T]>;

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

const turnId = '019a0000-0000-7000-8000-000000000001';
const messageId = '019a0000-0000-7000-8000-000000000002';
const call = { id: 'call_1', name: 'get_current_time', arguments: { timezone: 'UTC' } };
const usage = { input_tokens: 120, output_tokens: 20, cache_read_tokens: 0 };

/** One example `data` per type, shown in the API document (and a valid body for tests). */
export const eventExamples: { [T in EventType]: EventData<T> } = {
  'session.created': { harness_id: '019a0000-0000-7000-8000-00000000000a', agent_id: '019a0000-0000-7000-8000-00000000000b' },
  'session.started': {},
  'session.activated': { turn_id: turnId, input_message_id: messageId },
  'session.idled': { turn_id: turnId, iterations: 2, usage },
  'input.message': {
    message: { id: messageId, role: 'user', content: [{ type: 'text', text: 'What time is it?' }], created_at: '2026-11-27T12:00:00.000Z' },
  },
  'turn.started': { turn_id: turnId, input_message_id: messageId },
  'turn.completed': { turn_id: turnId, iterations: 2, duration_ms: 840, usage },
  'turn.failed': { turn_id: turnId, error: 'The model provider rejected the API key', error_code: 'llm_error', iterations: 1 },
  'turn.cancelled': { turn_id: turnId, reason: 'user_requested', usage },
  'reason.started': { turn_id: turnId, iteration: 1 },
  'reason.completed': { turn_id: turnId, iteration: 1, stop_reason: 'tool_use', tool_calls: 1 },
  'reason.thinking.started': { turn_id: turnId, model: 'gpt-5' },
  'reason.thinking.delta': { turn_id: turnId, delta: 'The user', accumulated: 'The user' },
  'reason.thinking.completed': { turn_id: turnId, thinking: 'The user wants the time; call the clock tool.' },
  'output.message.started': { turn_id: turnId, model: 'gpt-5', iteration: 1 },
  'output.message.delta': { turn_id: turnId, delta: ' is 12:00', accumulated: 'It is 12:00' },
  'output.message.completed': {
    message: {
      id: '019a0000-0000-7000-8000-000000000003',
      role: 'agent',
      content: [{ type: 'text', text: 'It is 12:00 UTC.' }],
      created_at: '2026-11-27T12:00:01.000Z',
    },
    metadata: { model: 'gpt-5', model_id: '019a0000-0000-7000-8000-00000000000c', provider_id: '019a0000-0000-7000-8000-00000000000d' },
    usage: { input_tokens: 120, output_tokens: 20 },
  },
  'act.started': { turn_id: turnId, iteration: 1, tool_calls: [{ id: call.id, name: call.name }] },
  'act.completed': { turn_id: turnId, iteration: 1, succeeded: 1, failed: 0 },
  'tool.started': { tool_call: call, display_name: 'Get Current Time' },
  'tool.completed': {
    tool_call_id: call.id,
    tool_name: call.name,
    display_name: 'Get Current Time',
    success: true,
    status: 'success',
    result: [{ type: 'text', text: '2026-11-27T12:00:00Z' }],
    duration_ms: 3,
  },
  'tool.call_requested': { tool_calls: [{ id: 'call_2', name: 'ask_user', arguments: { question: 'Which city?' } }] },
  'session.compacted': {
    summary: 'The user is planning a trip to Tokyo; flights are booked for 3 May.',
    up_to_event_id: '019a0000-0000-7000-8000-000000000020',
    tokens_before: 104_000,
    tokens_after: 12_500,
    reason: 'threshold',
    model: 'gpt-5',
    model_id: '019a0000-0000-7000-8000-00000000000c',
    provider_id: '019a0000-0000-7000-8000-00000000000d',
    usage,
  },
  'llm.generation': {
    turn_id: turnId,
    iteration: 1,
    model: 'gpt-5',
    model_id: '019a0000-0000-7000-8000-00000000000c',
    provider_id: '019a0000-0000-7000-8000-00000000000d',
    stop_reason: 'tool_use',
    duration_ms: 410,
    usage,
  },
};

/** `Event.<type>`: the documented schema of one event type, with an example. */
function eventSchema<T extends EventType>(type: T): TObject {
  const name = `Event_${type.replaceAll('.', '_')}`;
  return Type.Object(
    {
      id: Uuid,
      type: Type.Literal(type) as TLiteral<T>,
      ts: Timestamp,
      session_id: Uuid,
      sequence: Type.Integer({ minimum: 1 }),
      context: Type.Ref('EventContext'),
      data: eventData[type],
      metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
      tags: Type.Array(Type.String(), { description: 'Empty when the event has none.' }),
    },
    {
      $id: name,
      examples: [
        {
          id: '019a0000-0000-7000-8000-0000000000f0',
          type,
          ts: '2026-11-27T12:00:00.000Z',
          session_id: '019a0000-0000-7000-8000-0000000000e0',
          sequence: 1,
          context: type.startsWith('session.created') ? {} : { turn_id: turnId, input_message_id: messageId },
          data: eventExamples[type],
          tags: [],
        },
      ],
    },
  );
}

export const eventSchemas = (Object.keys(eventData) as EventType[]).map((type) => eventSchema(type));

/** Any event (the API document's `Event`): one of the catalogue's, by `type`. */
export const Event = Type.Unsafe<SessionEvent>({
  $id: 'Event',
  type: 'object',
  oneOf: eventSchemas.map((s) => ({ $ref: s.$id })),
  discriminator: { propertyName: 'type' },
});
