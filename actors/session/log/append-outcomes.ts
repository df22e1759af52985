/** What the turn log does with a batch it failed to append: what may be stored, which results are whose, what is handed over. */
import type { NewSessionEvent, SessionEvent } from '../../../schemas/events.js';
import type { AppendResult } from '../../../src/bus/index.js';
import { AppError } from '../../../src/errors.js';
import type { TurnState } from '../../../src/turns/index.js';

/** Conflicting appends retried this often before the attempt is given back to the queue (also the hand-over's tries). */
export const MAX_APPEND_ATTEMPTS = 20;
export const CONFLICT_RETRY_DELAY_MS = 1_000;
/** How soon a job whose attempt decided on a stale view (another writer's result) is offered again, in ms. */
export const REDECIDE_DELAY_MS = 0;

/**
 * Waits out the next pause after an append with an unknown outcome (retryPolicies.turnAppendOutcome
 * by default); false once the policy gives up.
 */
export type OutagePause = (err: unknown) => Promise<boolean>;

/**
 * Whether a failed append may have stored part of its events: anything but a refusal the
 * service itself decided (an id another session owns), which no retry changes.
 */
export function isUnknownOutcome(err: unknown): boolean {
  return !(err instanceof AppError && err.status < 500);
}

/** The tool call a `tool.completed` answers; null for any other event. */
export function resultCallId(e: NewSessionEvent): string | null {
  return e.type === 'tool.completed' ? e.data.tool_call_id : null;
}

/** A `tool.completed` whose call has a stored `tool.started` and no stored result (`stored`: the durable fold). */
export function isOpenResult(e: NewSessionEvent, stored: TurnState): boolean {
  const callId = resultCallId(e);
  return callId !== null && stored.steps.some((step) => step.started.has(callId) && !step.completed.has(callId));
}

/** `batch` starts a tool call that the log now shows started by another event (another attempt's). */
export function startTaken(batch: readonly NewSessionEvent[], stored: TurnState, storedIds: ReadonlySet<string>): boolean {
  return batch.some(
    (e) => e.type === 'tool.started' && !storedIds.has(e.id!) && stored.steps.some((step) => step.started.has(e.data.tool_call.id)),
  );
}

/** `batch` completes a tool call for which the log now holds a result that is not ours. */
export function resultTaken(batch: readonly NewSessionEvent[], stored: TurnState, storedIds: ReadonlySet<string>): boolean {
  return batch.some((e) => {
    const callId = resultCallId(e);
    return callId !== null && !storedIds.has(e.id!) && stored.steps.some((step) => step.completed.has(callId));
  });
}

export interface HandoverIo {
  /** Reads and folds what the log holds now. */
  readNew(): Promise<void>;
  /** A result in hand whose call is started and has no stored result (on the fold just read). */
  open(e: NewSessionEvent): boolean;
  /** Appends under optimistic concurrency, without newIds: a copy stored by an earlier try is found, not stored twice. */
  append(results: NewSessionEvent[]): Promise<AppendResult<SessionEvent>>;
  absorb(events: readonly SessionEvent[]): Promise<void>;
}

/**
 * The claim is lost, but tool results in hand must not turn into "interrupted": appends those
 * of `batch` that are still open, under optimistic concurrency (a conflict reads the log and
 * checks again), through the remaining outage pauses. Nothing else of the batch is appended,
 * and nothing at all once any result for the call is stored.
 */
export async function handOverResults(io: HandoverIo, batch: readonly NewSessionEvent[], pause: OutagePause): Promise<void> {
  for (let attempt = 1; attempt <= MAX_APPEND_ATTEMPTS; attempt++) {
    try {
      await io.readNew();
      const results = batch.filter((e) => io.open(e));
      if (!results.length) return;
      const r = await io.append(results);
      if (r.ok) return void (await io.absorb(r.events));
    } catch (err) {
      if (!isUnknownOutcome(err) || !(await pause(err))) return;
    }
  }
}
