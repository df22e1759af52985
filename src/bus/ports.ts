/**
 * The bus ports. `local/` (SQL-backed, in-process notifications) and `nats/` (JetStream)
 * implement them; `test/bus/conformance.ts` holds the one suite both must pass.
 */

/** Correlation ids of spec 2.5; `{}` for events outside a turn. */
export interface EventContext {
  turn_id?: string;
  input_message_id?: string;
  exec_id?: string;
  trace_id?: string;
  span_id?: string;
  parent_span_id?: string;
}

/**
 * What the log knows of any stored event (spec 2.5): its id, `type`, contiguous per-session
 * `sequence`, stamps and body. The ports below are generic over `E`, the union of the events a
 * log holds (the catalogue's `SessionEvent`, schemas/events.ts, bound where the bus is composed:
 * src/app/infrastructure.ts); the log itself stores them as JSON and never looks inside `data`.
 */
export interface LoggedEvent {
  id: string;
  type: string;
  ts: string;
  session_id: string;
  sequence: number;
  context: EventContext;
  data: Record<string, unknown>;
  metadata?: Record<string, unknown>;
  tags?: string[];
}

/** The fields the log stamps on append (sequence, ts, session_id) or fills when absent (id, context, tags). */
type Stamped = 'id' | 'ts' | 'session_id' | 'sequence' | 'context' | 'tags';

/**
 * What a writer hands to `append` for a log of events `E`, one member per member of `E` (so a
 * writer's `type` still picks its `data`): the log stamps `sequence`, `ts`, `session_id` and,
 * if absent, `id`; `context`, `tags` and a `data` that may be empty default to `{}`, `[]`, `{}`.
 */
export type NewEvent<E extends LoggedEvent> = E extends LoggedEvent
  ? Omit<E, Stamped | 'data'> & { id?: string; context?: EventContext; tags?: string[] } & OptionalWhenEmpty<E['data']>
  : never;

type OptionalWhenEmpty<D> = Record<never, never> extends D ? { data?: D } : { data: D };

/** A new event as the log's implementations see it: any type, any data. */
export type NewLoggedEvent = NewEvent<LoggedEvent>;

export interface AppendOptions {
  /**
   * Optimistic concurrency: the sequence the writer believes is the session's last (0 = empty).
   * When it differs, nothing is written and `{ok:false, currentSequence}` comes back.
   * Without it the log numbers the events after whatever is there, retrying internally.
   */
  expectedSequence?: number;
  /**
   * The caller promises that every id it set was minted for this append, is known to no other
   * writer and was not appended before (a retry after `{ok:false}` is fine: nothing was
   * written). None can be stored already, so the log skips its duplicate lookups and the NATS
   * log publishes the whole batch back to back. Default false.
   */
  newIds?: boolean;
}

export type AppendResult<E extends LoggedEvent> = { ok: true; events: E[] } | { ok: false; currentSequence: number };

export interface ReadOptions {
  /** Return events with sequence > afterSequence (default 0: from the start). */
  afterSequence?: number;
  /** Upper bound on the number of events returned (default 1000). */
  limit?: number;
}

/** A live, ordered, gap-free feed of a session's events. A second iteration throws. */
export interface EventSubscription<E extends LoggedEvent> extends AsyncIterable<E> {
  close(): void;
  /** Resolves when the subscription ends: void on close(), an Error when it broke. */
  closed(): Promise<void | Error>;
}

/** Where a followed feed delivers its events (EventReader.follow). */
export interface EventSink<E extends LoggedEvent> {
  /**
   * The next event: its sequence is the previous one's + 1. A returned promise holds the feed
   * until it settles (live events arriving meanwhile are buffered, past a cap re-read from the
   * log); a rejection ends the feed with that error.
   */
  event(event: E): void | Promise<void>;
  /** Called once when the feed ends, and nothing after it: null after close(), the error when it broke. */
  end(err: Error | null): void;
}

/** A followed feed; close() ends it (the sink's end(null) is called). */
export interface FeedHandle {
  close(): void;
}

/**
 * The read side of a session log: what the REST events routes, the SSE streams, the messages
 * view and the console get. It cannot change the log (as Restate's shared object context
 * cannot change the object's state); only session creation and the turn get an `EventLog`.
 *
 * `E` is what this service's writers append (`EventLog.append` takes only `NewEvent<E>`), so
 * that is what comes back. A log may still hold an event of a type `E` lacks (written by a
 * later version sharing the store during a rolling deploy): it is read back as it was stored,
 * so readers that branch on `type` keep a default branch (src/turns/turn-state.ts, src/events/messages.ts).
 */
export interface EventReader<E extends LoggedEvent> {
  /** Events after a position, in order. */
  read(sessionId: string, opts?: ReadOptions): Promise<E[]>;
  /** The stored event with that id in that session, or null. */
  findById(sessionId: string, eventId: string): Promise<E | null>;
  /** The session's last sequence (0 when empty). */
  lastSequence(sessionId: string): Promise<number>;
  /** Live events with sequence > afterSequence (replays what is stored first). */
  subscribe(sessionId: string, opts?: { afterSequence?: number }): EventSubscription<E>;
  /**
   * The same feed pushed to `sink`: an idle followed session holds no pending promise or timer
   * of its own (the SSE hub follows tens of thousands); `subscribe` is its async-iterator face.
   */
  follow(sessionId: string, sink: EventSink<E>, opts?: { afterSequence?: number }): FeedHandle;
}

/** The writer's side of a session log: reads, appends, and the purge of a deleted session. */
export interface EventLog<E extends LoggedEvent> extends EventReader<E> {
  /**
   * Appends events in order with contiguous sequence numbers. Ids are UUIDv7 and increase
   * within the session. An event whose id is already stored is not written again; the stored
   * copy is returned in its place.
   */
  append(sessionId: string, events: readonly NewEvent<E>[], opts?: AppendOptions): Promise<AppendResult<E>>;
  /** Deletes every event of the session (session delete); other sessions are untouched. */
  purge(sessionId: string): Promise<void>;
}

/** A turn waiting to run. `job` is opaque to the queue. */
export interface TurnJob {
  session_id: string;
  turn_id: string;
  job: Record<string, unknown>;
}

/** One worker's exclusive hold on a turn. */
export interface TurnClaim {
  readonly turn: TurnJob;
  /** 1 on first delivery, 2+ after a redelivery; part of the fencing epoch. */
  readonly deliveryCount: number;
  /** Keeps the claim alive during long work. */
  heartbeat(): Promise<void>;
  /** Done: the session may take its next turn. */
  ack(): Promise<void>;
  /** Give the turn back for redelivery after `delayMs` (default 0). */
  nak(delayMs?: number): Promise<void>;
  /** False once another worker has taken over this turn (a stale worker must stop writing). */
  isCurrent(): Promise<boolean>;
  /**
   * Where the process of the delivery this claim took the turn from stands: `alive` (it answers:
   * its lease ran out while it lived, e.g. its heartbeats were lost in a NATS election), `silent`
   * (connected but not answering: frozen, a long GC pause, a stalled NATS node) — either may
   * still hand a tool's result over through the log — or `gone` (crashed; also: no earlier
   * delivery). Absent: always gone.
   */
  predecessor?(): Promise<Presence>;
}

/** What a process check found (TurnClaim.predecessor). */
export type Presence = 'alive' | 'silent' | 'gone';

export interface ClaimOptions {
  /** How long to wait for a turn before returning null, in ms (default 1000). */
  waitMs?: number;
  signal?: AbortSignal;
}

export interface TurnQueue {
  /** Queues a turn; throws SessionBusyError when the session already has one queued or running. */
  enqueue(turn: TurnJob): Promise<void>;
  /** Claims the next available turn for this worker, or null after waitMs. */
  claim(workerId: string, opts?: ClaimOptions): Promise<TurnClaim | null>;
  /** The id of the session's queued or running turn, or null when there is none. */
  queued(sessionId: string): Promise<string | null>;
  /** Drops the session's turn, if any (session delete, stuck turn). */
  remove(sessionId: string): Promise<void>;
  /**
   * Drops the session's job only when it is `turnId`'s: a turn whose end is stored but whose ack
   * has not landed (its worker is frozen, or NATS is electing a leader) would keep the session
   * busy. True when that job is gone (or nothing is queued), false when another turn's is there.
   * The finished turn's worker, should it wake, finds its claim gone and writes nothing.
   */
  removeFinished(sessionId: string, turnId: string): Promise<boolean>;
}

/** Control messages between API and workers; at-most-once, so receivers also poll state. */
export interface Signal {
  type: 'cancel' | 'tool_results' | 'deleted';
  session_id: string;
  turn_id?: string;
}

export interface Signals {
  send(signal: Signal): Promise<void>;
  /** Receives signals for one session until the returned function is called. */
  subscribe(sessionId: string, onSignal: (signal: Signal) => void): () => void;
  /**
   * Receives signals of one type for every session until the returned function is called: one
   * subscription per process instead of one per session (the SSE hub watches tens of
   * thousands of sessions and needs only `deleted`).
   */
  subscribeType(type: Signal['type'], onSignal: (signal: Signal) => void): () => void;
}

/** What an instance reports about itself to operators (NATS micro service `status` and STATS data). */
export interface InstanceStatus {
  instance_id: string;
  role: string;
  version: string;
  mode: string;
  uptime_s: number;
  turns_in_flight: number;
  sse_connections: number;
  draining: boolean;
}

/** The instance side of the operator endpoints. */
export interface OpsHooks {
  status(): InstanceStatus;
  /** Stops claiming turns and takes the instance out of the load balancer; running turns finish. */
  drain(): Promise<InstanceStatus>;
  /** Undoes drain. */
  resume(): Promise<InstanceStatus>;
}

export interface OpsServiceOptions {
  /** Semver of the service. */
  version: string;
  /** Static facts shown by `nats micro info` (instance id, role, mode, host, pid). */
  metadata: Record<string, string>;
}

export interface OpsService {
  /** The micro service id (in `$SRV.*.<name>.<id>` and the endpoint subjects). */
  readonly id: string;
  stop(): Promise<void>;
}

/**
 * What the log's readers get (REST events routes, SSE hub, messages view): the read side of the
 * events, and the signals that tell a stream its session was deleted. No append, no purge.
 */
export interface BusReader<E extends LoggedEvent> {
  readonly events: EventReader<E>;
  readonly signals: Signals;
}

/**
 * The bus of a service whose session logs hold events `E` (src/app binds the catalogue's
 * union). Its `events` can write: only session creation and the turn (the worker in actors/,
 * and the turn API's cancel and client tool results) are given it; readers get a `BusReader`.
 */
export interface Bus<E extends LoggedEvent> {
  readonly kind: 'local' | 'nats';
  readonly events: EventLog<E>;
  readonly turns: TurnQueue;
  readonly signals: Signals;
  /** NATS only: registers the instance as a NATS micro service (bus/nats/ops-service.ts). */
  serveOps?(opts: OpsServiceOptions, hooks: OpsHooks): Promise<OpsService>;
  /** Throws when the bus is unreachable (health check). */
  ping(): Promise<void>;
  close(): Promise<void>;
}
