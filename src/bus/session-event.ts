import { newIdAfter } from '../ids.js';
import type { EventLog, LoggedEvent, NewLoggedEvent } from './ports.js';

/** The session's last stored event as far as a writer knows: its sequence and id (0/undefined when empty). */
export interface EventTail {
  sequence: number;
  id: string | undefined;
}

/**
 * Stamps a new event to follow `prev`: the next sequence, `ts`, `tags` (`[]` unless given), and
 * (unless the writer chose one) an id greater than the previous one, so ids increase within the session even when
 * several events share a millisecond.
 */
export function stampEvent(sessionId: string, input: NewLoggedEvent, prev: EventTail, ts: string): LoggedEvent {
  const event: LoggedEvent = {
    id: input.id ?? newIdAfter(prev.id),
    type: input.type,
    ts,
    session_id: sessionId,
    sequence: prev.sequence + 1,
    context: input.context ?? {},
    data: input.data ?? {},
  };
  if (input.metadata !== undefined) event.metadata = input.metadata;
  // Spec 2.5: every event carries its tags, an empty array when it has none.
  event.tags = input.tags ?? [];
  return event;
}

/**
 * The log of events `E` that an implementation's log of any event is. The implementations store
 * events as JSON and read them back as they were written; the port lets writers append only
 * `NewEvent<E>`, so what they read back is `E`. This is the one place that says so, where a bus
 * is built for its union (createLocalBus / createNatsBus), instead of a cast at each reader.
 */
export function holding<E extends LoggedEvent>(log: EventLog<LoggedEvent>): EventLog<E> {
  return log as unknown as EventLog<E>;
}
