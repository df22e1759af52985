/**
 * The first events of a compaction on demand (POST …/compact, docs/decisions/0103): a turn of its
 * own kind, so it runs alone in the session's turn queue, is cancelled by the spec's cancel flow
 * and is followed like any turn (`turn.started` … `session.idled`). It answers no message: its
 * `input_message_id` is its turn id. The job carries these events and its worker appends them.
 */
import type { NewSessionEvent } from '../../schemas/events.js';
import { newId, newIdAfter } from '../ids.js';
import { turnEvents, type TurnRef } from './turn-events.js';

/** A compaction turn's identity; `turn.started`'s event id is the turn id, as for every turn. */
export function mintCompactionTurn(): TurnRef {
  const turnId = newId();
  return { turn_id: turnId, input_message_id: turnId };
}

/** turn.started (kind `compaction`), session.activated. */
export function compactionPreamble(turn: TurnRef, userId: string | undefined): NewSessionEvent[] {
  return [turnEvents.turnStarted(turn.turn_id, turn, userId, 'compaction'), turnEvents.sessionActivated(newIdAfter(turn.turn_id), turn)];
}
