/**
 * The payload of a queued turn. `start` jobs carry the events the API appends when a turn
 * begins, ids precomputed, so a worker can append them itself (deduplicated by id) if the API
 * died between enqueueing and appending. `resume` jobs continue a turn that was suspended for
 * client tool results or is being cancelled while suspended; their queue-level id is fresh
 * (the queue deduplicates by it), the turn id is in the payload. `compact` jobs are a compaction
 * on demand: a start job of a turn that summarises the history instead of answering a message,
 * so it shares the session's one-turn rule and the cancel flow (docs/decisions/0103).
 */
import type { NewSessionEvent } from '../../schemas/events.js';
import type { TurnJob } from '../bus/index.js';
import { newId } from '../ids.js';
import type { TurnRef } from './turn-events.js';

export interface TurnJobData {
  /** `compact`: a compaction on demand (POST …/compact), a turn of its own whose preamble has no input message. */
  kind: 'start' | 'resume' | 'compact';
  org_id: string;
  turn_id: string;
  input_message_id: string;
  /**
   * The user whose request made this job (the message's or the tool results' sender); absent
   * for the scheduler. Tools use the session creator's connections only when it is the creator.
   */
  user_id?: string;
  /** The input message's tags, carried by every event of the turn. */
  tags?: string[];
  /** `start` of a queued message (decision 0097): its queue row, marked started when the turn begins. */
  queued_id?: string;
  /** `compact` only: what the summary should keep or stress (the request's `instructions`). */
  instructions?: string;
  /** `start`: input.message, (session.started), turn.started, session.activated; `compact`: turn.started, session.activated. */
  preamble?: NewSessionEvent[];
  /**
   * W3C traceparent of the span that queued the job (the HTTP request): the worker's turn span
   * is its child, in whichever process runs the turn (observability/tracing.ts).
   */
  traceparent?: string;
}

export function startJob(sessionId: string, data: Omit<TurnJobData, 'kind'>): TurnJob {
  return { session_id: sessionId, turn_id: data.turn_id, job: { kind: 'start', ...data } };
}

export function compactJob(sessionId: string, data: Omit<TurnJobData, 'kind'>): TurnJob {
  return { session_id: sessionId, turn_id: data.turn_id, job: { kind: 'compact', ...data } };
}

export function resumeJob(sessionId: string, data: Omit<TurnJobData, 'kind' | 'preamble'>): TurnJob {
  return { session_id: sessionId, turn_id: newId(), job: { kind: 'resume', ...data } };
}

/** The job's data; throws on a payload this version cannot read. */
export function parseTurnJob(turn: TurnJob): TurnJobData & { turn: TurnRef } {
  const d = turn.job as Partial<TurnJobData>;
  if ((d.kind !== 'start' && d.kind !== 'resume' && d.kind !== 'compact') || !d.turn_id || !d.input_message_id || !d.org_id) {
    throw new Error(`unreadable turn job for session ${turn.session_id}`);
  }
  const turnRef: TurnRef = { turn_id: d.turn_id, input_message_id: d.input_message_id };
  if (Array.isArray(d.tags) && d.tags.length) turnRef.tags = d.tags.map(String);
  return { ...(d as TurnJobData), turn: turnRef };
}
