/** The fold a turn works on: the session's transcript and the turn's state, from the log's events. */
import type { NewSessionEvent, SessionEvent } from '../../../schemas/events.js';
import { evolveTurn, initialTurnState, type TurnRef, type TurnState } from '../../../src/turns/index.js';
import { emptyTranscript, extendTranscript, type Transcript } from './transcript.js';

/** What a worker keeps between turns of a session to avoid re-reading the whole log. */
export interface FoldedSession {
  transcript: Transcript;
  turn: TurnState;
}

/** `f` with the events after its sequence folded in; `seen` collects their ids. */
export function fold(f: FoldedSession, events: readonly SessionEvent[], seen?: Set<string>): FoldedSession {
  const fresh = events.filter((e) => e.sequence > f.transcript.sequence);
  if (!fresh.length) return f;
  if (seen) for (const e of fresh) seen.add(e.id);
  let turn = f.turn;
  for (const e of fresh) turn = evolveTurn(turn, e);
  return { transcript: extendTranscript(f.transcript, fresh), turn };
}

/** Queued events as if stored after `after` (ids are ours; sequences are provisional). */
export function provisional(sessionId: string, events: readonly NewSessionEvent[], after: number): SessionEvent[] {
  const ts = new Date().toISOString();
  return events.map((e, i) => ({ ...e, id: e.id!, ts, session_id: sessionId, sequence: after + i + 1, context: e.context ?? {} }));
}

/**
 * A fold a turn's view may start from: a worker's cached fold (with the state of the turn it
 * folded last), or a stored snapshot (the transcript only).
 */
export interface StartingPoint {
  transcript: Transcript;
  turn?: TurnState;
}

/** Where a turn's view starts: the starting point (this turn's state kept only if it is the same turn), or nothing. */
export function startingFold(turn: TurnRef, from?: StartingPoint): FoldedSession {
  if (!from) return { transcript: emptyTranscript(), turn: initialTurnState(turn) };
  return { transcript: from.transcript, turn: from.turn?.turn.turn_id === turn.turn_id ? from.turn : initialTurnState(turn) };
}
