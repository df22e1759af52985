import type { RetryPolicy } from './retry.js';

/**
 * The service's retry policies by name: each loop that tries again says which one it follows,
 * and the numbers (with why they are what they are) live here, not in the loop.
 */
export const retryPolicies = {
  /**
   * An append that lost the race for the session's next sequence (another writer got in first):
   * two rounds at once (the conflict is usually gone on the next read of the tail), then a few
   * ms of full jitter to spread out competing processes. 50 rounds only under pathological contention.
   */
  appendConflict: {
    name: 'append-conflict',
    maxAttempts: 50,
    backoff: { firstMs: 1, growth: 'linear', maxMs: 50, jitter: 'full', immediateRetries: 2 },
  },
  /** The same race on the SQL log (embedded mode): one more round at once, jitter up to 20 ms. */
  sqlAppendConflict: {
    name: 'sql-append-conflict',
    maxAttempts: 50,
    backoff: { firstMs: 1, growth: 'linear', maxMs: 20, jitter: 'full', immediateRetries: 3 },
  },
  /**
   * Start-up against NATS: the server may come up after the instances (compose, Kubernetes) and
   * a fresh cluster answers JetStream only once it has a meta leader. Waits forever unless the
   * caller sets a deadline (NATS_START_WAIT_MS); no jitter, so the warning says the true pause.
   */
  natsReconnect: {
    name: 'nats-start',
    maxAttempts: Number.POSITIVE_INFINITY,
    backoff: { firstMs: 250, growth: 'exponential', maxMs: 5_000, jitter: 'none' },
  },
  /**
   * A request to a consumer or bucket whose leader is lost (its node died, an election runs): no
   * responders or a timeout until the new leader is there. Sent again every 250 ms; the caller
   * sets the deadline (the lease, after which the server redelivers anyway).
   */
  leaderless: {
    name: 'leaderless',
    maxAttempts: Number.POSITIVE_INFINITY,
    backoff: { firstMs: 250, growth: 'constant', maxMs: 250, jitter: 'none' },
  },
  /** Servers started together answer "no suitable peers" until they have heard from each other. */
  clusterForming: {
    name: 'cluster-forming',
    maxAttempts: Number.POSITIVE_INFINITY,
    deadlineMs: 30_000,
    backoff: { firstMs: 100, growth: 'linear', maxMs: 1_000, jitter: 'none' },
  },
  /** A new replicated stream until its leader and every replica are current: asked every 100 ms, as long as a cluster forms. */
  streamReplicas: {
    name: 'stream-replicas',
    maxAttempts: Number.POSITIVE_INFINITY,
    deadlineMs: 30_000,
    backoff: { firstMs: 100, growth: 'constant', maxMs: 100, jitter: 'none' },
  },
  /**
   * A stream's leader get, sent again at once after each per-try timeout while the stream elects
   * a leader (a get changes nothing, so a copy is harmless); the caller sets maxAttempts from its timeout.
   */
  leaderGet: {
    name: 'leader-get',
    maxAttempts: 1,
    backoff: { firstMs: 0, growth: 'constant', maxMs: 0, jitter: 'none' },
  },
  /**
   * A pull right after an ordered consumer is created can find nobody listening yet on a
   * cluster (the consumer's server announces its pull subject a moment after answering the create).
   */
  scanNoResponders: {
    name: 'scan-no-responders',
    maxAttempts: 9,
    backoff: { firstMs: 25, growth: 'linear', maxMs: 25 * 8, jitter: 'none' },
  },
  /**
   * A session feed's log read (the tail, a replay page) or subscription that failed, e.g. timing
   * out under load: tried again a few times in a row, from the last delivered sequence, before
   * every client of the session is reset (they all reconnect at once, heavier than a re-read).
   */
  sessionFeed: {
    name: 'session-feed',
    maxAttempts: 4,
    backoff: { firstMs: 200, growth: 'linear', maxMs: 200 * 3, jitter: 'none' },
  },
  /**
   * A model vendor's call (429, 5xx, network) before any output reached the consumer: 3 retries,
   * exponential from 500 ms with jitter in [50%, 100%]; a vendor's Retry-After replaces the pause.
   * The provider record's options override the numbers (src/llm/retry.ts).
   */
  llmCall: {
    name: 'llm-call',
    maxAttempts: 4,
    backoff: { firstMs: 500, growth: 'exponential', maxMs: 30_000, jitter: 'half' },
  },
  /**
   * A message that meets the previous turn's job still queued although the session row says that
   * turn is over (its worker marks the session idle, then acks): asked again every 5 ms for up to
   * 2 s, the window of one ack, before the message is answered 409.
   */
  previousTurnJob: {
    name: 'previous-turn-job',
    maxAttempts: Number.POSITIVE_INFINITY,
    deadlineMs: 2_000,
    backoff: { firstMs: 5, growth: 'constant', maxMs: 5, jitter: 'none' },
  },
  /**
   * The last client tool result meets the suspended turn's own job not yet acked: asked again
   * every 20 ms for up to 5 s; after that the job's redelivery resumes the turn anyway.
   */
  suspendedTurnJob: {
    name: 'suspended-turn-job',
    maxAttempts: Number.POSITIVE_INFINITY,
    deadlineMs: 5_000,
    backoff: { firstMs: 20, growth: 'constant', maxMs: 20, jitter: 'none' },
  },
  /**
   * A turn's status change refused by a pending cancel whose events are not stored yet: the log
   * is read again every 50 ms; the caller sets how long (the runner's cancelEventsWaitMs, 5 s).
   */
  cancelEvents: {
    name: 'cancel-events',
    maxAttempts: Number.POSITIVE_INFINITY,
    backoff: { firstMs: 50, growth: 'constant', maxMs: 50, jitter: 'none' },
  },
  /**
   * A cancel of a turn whose worker began it (session row) before its `turn.started` is stored:
   * the worker is appending it; looked up every 20 ms for up to 5 s.
   */
  turnStartedStored: {
    name: 'turn-started-stored',
    maxAttempts: Number.POSITIVE_INFINITY,
    deadlineMs: 5_000,
    backoff: { firstMs: 20, growth: 'constant', maxMs: 20, jitter: 'none' },
  },
  /**
   * A turn's append whose outcome is unknown (the log timed out or lost its leader): about 10 s
   * from the first failure, longer than a replicated stream takes to elect a new leader, in short
   * pauses so the append goes through within half a second of the new leader instead of up to 4 s
   * later (issue 13: the slow tail of a NATS node loss). The deadline, not a count, ends it: tries
   * that each ran into a request timeout kept one attempt at a preamble for 60 s (issue 13, the
   * SIGTERM straggler); the job goes back to the queue instead.
   */
  turnAppendOutcome: {
    name: 'turn-append-outcome',
    maxAttempts: Number.POSITIVE_INFINITY,
    deadlineMs: 10_000,
    backoff: { firstMs: 250, growth: 'linear', maxMs: 500, jitter: 'none' },
  },
  /**
   * A read through a short outage of its store (a tool result's secret check must not turn a
   * succeeded call into a failed one because PostgreSQL was unreachable for seconds, issue 13):
   * exponential from 100 ms to 2 s; the caller sets the deadline.
   */
  storeOutage: {
    name: 'store-outage',
    maxAttempts: Number.POSITIVE_INFINITY,
    backoff: { firstMs: 100, growth: 'exponential', maxMs: 2_000, jitter: 'none' },
  },
  /** A worker's claim that failed (the bus unreachable): from 500 ms up to 5 s, spread so instances do not ask together. */
  turnClaim: {
    name: 'turn-claim',
    maxAttempts: Number.POSITIVE_INFINITY,
    backoff: { firstMs: 500, growth: 'exponential', maxMs: 5_000, jitter: 'half' },
  },
  /**
   * A turn attempt that failed for internal reasons, by the job's delivery count: from 500 ms,
   * doubling up to 30 s (the job's redelivery delay; outages and stale claims have their own, shorter ones).
   */
  turnAttempt: {
    name: 'turn-attempt',
    maxAttempts: Number.POSITIVE_INFINITY,
    backoff: { firstMs: 500, growth: 'exponential', maxMs: 30_000, jitter: 'none' },
  },
} as const satisfies Record<string, RetryPolicy>;
