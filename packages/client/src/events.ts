import type { components } from './generated/openapi.js';

/**
 * A session event: the union discriminated by `type` that the service's event catalogue
 * (schemas/events.ts) publishes in its OpenAPI document, generated into this package. Switch on
 * `type` and `data` narrows.
 */
export type SessionEvent = components['schemas']['Event'];

/** Every event type. */
export type EventType = SessionEvent['type'];

/** One event of type `T`. */
export type SessionEventOf<T extends EventType> = Extract<SessionEvent, { type: T }>;

/** The `data` of each event type. */
export type EventDataMap = { [T in EventType]: SessionEventOf<T>['data'] };

/** Correlation ids of an event (spec 2.5); `{}` outside a turn. */
export type EventContext = components['schemas']['EventContext'];

export type Message = components['schemas']['Message'];
/** A part of a message's `content` (`text`, `image_file`, `tool_call`, `tool_result`, …). */
export type ContentPart = { type: string; text?: string; [key: string]: unknown };
export type ToolCall = EventDataMap['tool.call_requested']['tool_calls'][number];
export type Usage = EventDataMap['turn.completed']['usage'];

/** Type guard: `isEvent(e, 'output.message.delta')` narrows `e`. */
export function isEvent<T extends EventType>(event: SessionEvent, type: T): event is SessionEventOf<T> {
  return event.type === type;
}

/** The text parts of a message, joined. */
export function messageText(message: { content: readonly unknown[] } | undefined): string {
  if (!message) return '';
  return (message.content as ContentPart[])
    .filter((p) => p.type === 'text' && typeof p.text === 'string')
    .map((p) => p.text)
    .join('');
}
