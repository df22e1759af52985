/** What a turn log is opened with. */
import type { NewSessionEvent, SessionEvent } from '../../../schemas/events.js';
import type { EventLog, TurnClaim } from '../../../src/bus/index.js';
import type { Logger } from '../../../src/log.js';
import type { RetryPolicy } from '../../../src/retry/index.js';
import type { TurnRef, TurnState } from '../../../src/turns/index.js';

export interface TurnLogOptions {
  events: EventLog<SessionEvent>;
  claim: Pick<TurnClaim, 'isCurrent'>;
  sessionId: string;
  turn: TurnRef;
  /** Called after events of other writers were folded, with the (optimistic) state. */
  onFolded?: (state: TurnState) => void;
  /**
   * The job may be older than the cached fold (a redelivery, a resume): then a missing
   * `turn.started` is looked up instead of assumed to be on its way. False for a first start,
   * whose attempt writes `turn.started` itself.
   */
  mayPredateCache?: boolean;
  /** Called with events as they are queued (not `stamped` ones): trace ids (turn-trace.ts). */
  stamp?: (events: readonly NewSessionEvent[]) => void;
  /** How an append that failed with an unknown outcome is retried (default retryPolicies.turnAppendOutcome). */
  appendRetry?: RetryPolicy;
  /** Where a slow append says what it waited for (append-waits.ts). */
  log?: Logger;
  /** Told how many events each read of the log returned (the fold's cost; metrics, tests). */
  onRead?: (count: number) => void;
}
