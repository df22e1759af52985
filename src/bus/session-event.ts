import { newIdAfter } from '../ids.js';
import type { SessionEvent as CataloguedEvent } from '../../schemas/events.js';
import type { NewEvent, SessionEvent } from './ports.js';

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
export function stampEvent(sessionId: string, input: NewEvent, prev: EventTail, ts: string): SessionEvent {
  const event: SessionEvent = {
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
 * Stored events as the catalogue's union (schemas/events.ts). The log stores any event; every
 * event this service appends is built through the catalogue (src/turns/turn-events.ts, session
 * create), so this is the one place that reads them back as the typed union.
 */
export function catalogued<E extends SessionEvent>(event: E): CataloguedEvent;
export function catalogued<E extends SessionEvent>(events: readonly E[]): readonly CataloguedEvent[];
export function catalogued(x: SessionEvent | readonly SessionEvent[]): CataloguedEvent | readonly CataloguedEvent[] {
  return x as CataloguedEvent | readonly CataloguedEvent[];
}
