/**
 * How a turn attempt can end besides success (style rule 22): a `TerminalTurnError` ends the
 * turn with `turn.failed`; a `RetryableTurnError` gives the job back for a later attempt;
 * `TurnStoppedError` means this worker must stop touching the turn (cancelled work that is
 * finished elsewhere, a lost claim, a deleted session, shutdown).
 */
import { UnstorableEventError } from '../bus/index.js';
import { LlmError } from '../llm/index.js';
import type { TurnErrorCode } from './turn-events.js';

export class TerminalTurnError extends Error {
  readonly errorCode: TurnErrorCode;
  /** `message` is shown to clients in `turn.failed`: keep it free of internals. */
  constructor(message: string, errorCode: TurnErrorCode, options?: ErrorOptions) {
    super(message, options);
    this.name = 'TerminalTurnError';
    this.errorCode = errorCode;
  }
}

/** Marks a turn attempt aborted because the user cancelled (the attempt's loop then closes the turn). */
export class TurnCancelled extends Error {
  constructor() {
    super('turn cancelled');
    this.name = 'TurnCancelled';
  }
}

export class RetryableTurnError extends Error {
  readonly retryAfterMs: number;
  constructor(message: string, retryAfterMs: number, options?: ErrorOptions) {
    super(message, options);
    this.name = 'RetryableTurnError';
    this.retryAfterMs = retryAfterMs;
  }
}

/**
 * The attempt queued events decided on a view the log has since moved past: another attempt
 * started a tool call this one was starting (both passed their claim check before either
 * appended). Appending anyway would run the tool twice; the attempt forgets what it queued and
 * decides again on what the log holds, which waits for the other attempt's result.
 */
export class StaleDecisionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StaleDecisionError';
  }
}

/** `void`: the job of a start request that was answered with an error (session-status.ts voidTurn). */
export type TurnStopReason = 'stale_claim' | 'session_deleted' | 'shutdown' | 'void';

export class TurnStoppedError extends Error {
  readonly reason: TurnStopReason;
  constructor(reason: TurnStopReason) {
    super(`turn stopped: ${reason}`);
    this.name = 'TurnStoppedError';
    this.reason = reason;
  }
}

/** The `turn.failed` an error ends the turn with, or null when it does not end the turn. */
export function asTerminal(err: unknown): TerminalTurnError | null {
  if (err instanceof TerminalTurnError) return err;
  if (err instanceof LlmError) return new TerminalTurnError(err.message, 'llm_error', { cause: err });
  // Refused for its content, it would be refused again on every redelivery: the turn ends here.
  if (err instanceof UnstorableEventError) return new TerminalTurnError(err.message, 'internal_error', { cause: err });
  return null;
}
