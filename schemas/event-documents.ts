/**
 * The event catalogue as the API document shows it: one schema per type (`Event_<type>`), each
 * with an example, and `Event`, any of them by `type`. The types and data schemas are events.ts.
 */
import { Type, type TLiteral, type TObject } from '@sinclair/typebox';
import { Timestamp, Uuid } from './common.js';
import type { EventType } from './event-types.js';
import { eventData, type EventData, type SessionEvent } from './events.js';

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
    message: {
      id: messageId,
      role: 'user',
      content: [{ type: 'text', text: 'What time is it?' }],
      created_at: '2026-11-27T12:00:00.000Z',
    },
  },
  'input.queued': { queued_id: '019a0000-0000-7000-8000-000000000004', position: 1, on_busy: 'enqueue' },
  'input.dequeued': { queued_id: '019a0000-0000-7000-8000-000000000004', reason: 'started', turn_id: turnId },
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
  'subagent.started': {
    tool_call_id: 'call_3',
    agent_id: '019a0000-0000-7000-8000-00000000000e',
    child_session_id: '019a0000-0000-7000-8000-00000000000f',
    child_turn_id: '019a0000-0000-7000-8000-000000000010',
  },
  'tool.call_requested': { tool_calls: [{ id: 'call_2', name: 'ask_user', arguments: { question: 'Which city?' } }] },
  'tool.approval_requested': {
    tool_calls: [{ id: 'call_3', name: 'github__create_issue', arguments: { title: 'Flaky test' } }],
    deciders: { session_owner: '019a0000-0000-7000-8000-00000000000e', org_role: 'admin' },
  },
  'tool.approval_decided': {
    tool_call_id: 'call_3',
    tool_name: 'github__create_issue',
    approved: false,
    reason: 'Not in this repository',
    decided_by: '019a0000-0000-7000-8000-00000000000e',
  },
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
