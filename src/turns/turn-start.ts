/**
 * The ids and first events of a turn started by a user message, shared by the API (a message
 * sent to an idle session) and the queue's dispatcher (a queued message whose turn comes).
 * The job carries these events and its worker is their one writer (docs/decisions/0028).
 */
import type { NewSessionEvent } from '../../schemas/events.js';
import { newId, newIdAfter } from '../ids.js';
import { turnEvents, type MessagePart, type StoredMessage, type TurnRef } from './turn-events.js';

/** The ids a message and its turn get, fixed before anything is queued or appended. */
export interface AcceptedMessage {
  message: StoredMessage;
  event_id: string;
  started_id: string;
  turn_id: string;
}

/** What a user sent: the message before it gets its ids. */
export interface MessageInput {
  content: MessagePart[];
  controls?: Record<string, unknown>;
  tags?: string[];
  metadata?: Record<string, unknown>;
  /** When the user sent it (a queued message keeps its arrival time). */
  created_at?: string;
}

/** Mints the message's and its turn's ids, in increasing order (turn.started's event id is the turn id). */
export function mintAccepted(input: MessageInput): AcceptedMessage {
  const inputMessageId = newId();
  const eventId = newIdAfter(inputMessageId);
  const startedId = newIdAfter(eventId);
  const turnId = newIdAfter(startedId);
  const message: StoredMessage = {
    id: inputMessageId,
    role: 'user',
    content: input.content,
    created_at: input.created_at ?? new Date().toISOString(),
  };
  if (input.controls && Object.keys(input.controls).length) message.controls = { ...input.controls } as StoredMessage['controls'];
  // The message's tags go on every event of its turn (spec 2.5), so clients can filter by them.
  const uniqueTags = [...new Set(input.tags ?? [])];
  if (uniqueTags.length) message.tags = uniqueTags;
  if (input.metadata) message.metadata = input.metadata;
  return { message, event_id: eventId, started_id: startedId, turn_id: turnId };
}

export function turnRefOf(accepted: AcceptedMessage): TurnRef {
  const turn: TurnRef = { turn_id: accepted.turn_id, input_message_id: accepted.message.id };
  if (accepted.message.tags) turn.tags = [...accepted.message.tags];
  return turn;
}

/**
 * input.message, session.started (the session's first turn), turn.started, session.activated;
 * `before`: events of the same start written ahead of them (a queued message's input.dequeued).
 */
export function startPreamble(
  accepted: AcceptedMessage,
  firstTurn: boolean,
  userId: string | undefined,
  before: NewSessionEvent[] = [],
): NewSessionEvent[] {
  const turn = turnRefOf(accepted);
  const preamble: NewSessionEvent[] = [...before, turnEvents.inputMessage(accepted.event_id, accepted.message, turn)];
  if (firstTurn) preamble.push(turnEvents.sessionStarted(accepted.started_id, turn));
  preamble.push(turnEvents.turnStarted(accepted.turn_id, turn, userId), turnEvents.sessionActivated(newIdAfter(accepted.turn_id), turn));
  return preamble;
}
