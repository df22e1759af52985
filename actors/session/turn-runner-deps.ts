/**
 * What a turn runner is built from, apart from the runner itself, so that its attempts
 * (turn-attempt.ts) can name it without importing the runner that creates them.
 */
import type { SessionEvent } from '../../schemas/events.js';
import type { Bus } from '../../src/bus/index.js';
import type { CompactionOptions } from './compaction/compactor.js';
import type { CapabilityLookup } from '../../src/capabilities/index.js';
import type { Logger } from '../../src/log.js';
import type { RetryPolicy } from '../../src/retry/index.js';
import type { Tracing } from '../../src/observability/index.js';
import type { Store } from '../../src/db/index.js';
import type { ImageSource } from '../../src/turns/index.js';
import type { ModelResolver } from '../../src/llm/index.js';
import type { MessageQueue, QueueDispatcher, SessionStatusStore } from '../../src/turns/index.js';
import type { ToolContextFactory } from './steps/tool-context.js';
import type { ReplySchemaChecks } from '../../src/offthread/index.js';
import type { FoldObserver } from './log/snapshot-store.js';

export interface TurnRunnerDeps {
  store: Store;
  bus: Bus<SessionEvent>;
  log: Logger;
  capabilities: CapabilityLookup;
  models: ModelResolver;
  toolStorage: ToolContextFactory;
  images: ImageSource;
  status: SessionStatusStore;
  /** Messages sent while a turn ran (decision 0097): a queued message's row is marked started when its turn begins. */
  queue?: MessageQueue;
  /** Starts the session's next queued message once an attempt is over. */
  dispatcher?: QueueDispatcher;
  /** Structured replies' checks against their schema (the parse pool). */
  replySchemas: ReplySchemaChecks;
  /** Turn, reason, act and tool spans; the ids on the turn's events (default: ids only). */
  tracing?: Tracing;
  /** Counts snapshot loads and the events turns read (metrics). */
  folds?: FoldObserver;
}

export interface TurnRunnerOptions {
  /** Iterations per turn unless the agent or harness sets one (default 100). */
  maxIterations: number;
  /** Per tool call, in ms (default 60000). */
  toolTimeoutMs: number;
  /** How long a tool result's secret check retries an unreachable database, in ms (default 30000). */
  secretCheckWaitMs: number;
  /** The claim lease, in ms; heartbeats go out every third of it (default 60000). */
  leaseMs: number;
  maxParallelTools: number;
  /** Delta batching window, in ms (default 100, spec 6.1). */
  deltaIntervalMs: number;
  /** How often a running turn looks for events of other writers (cancel), in ms (default 1000). */
  pollMs: number;
  /** Attempts before a turn that keeps failing for internal reasons is failed for good (default 10). */
  maxDeliveries: number;
  /** How long to wait for a pending cancel's events before going idle anyway, in ms (default 5000). */
  cancelEventsWaitMs: number;
  /** Sessions whose folded log is kept between turns (default 2000). */
  cacheSize: number;
  /**
   * A session with no turn for this long loses its folded log, in ms (default 60000): the fold
   * saves reading the whole log at the session's next turn, which in a conversation comes
   * within seconds to a minute; later, that turn folds the log from the start.
   */
  cacheIdleMs: number;
  /** How an append whose outcome is unknown is retried (turn-log.ts; retryPolicies.turnAppendOutcome). */
  appendRetry: RetryPolicy;
  /**
   * Events the log may grow by past a session's stored snapshot before a turn's end writes a new
   * one (SESSION_SNAPSHOT_INTERVAL_EVENTS, default 200; 0: no snapshots, a cold turn folds the log).
   */
  snapshotIntervalEvents: number;
  /** Context compaction (issue 26; docs/operations.md §33). */
  compaction: CompactionOptions;
}
