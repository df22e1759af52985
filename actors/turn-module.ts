/**
 * The turn as one module (issue 18 item 3): its API half (submit, cancel, tool results: the
 * service and its routes) and its engine (the worker, for the `worker` and `all` roles) are built
 * here from the same ports, so the composition root wires the turn once and hands nothing back in.
 * The ports belong to the turn; the modules where models, session storage and images live
 * implement them (src/api/llm-models/model-resolver.ts, src/session-storage/).
 */
import type { SessionEvent } from '../schemas/events.js';
import { hostname } from 'node:os';
import type { Bus } from '../src/bus/index.js';
import type { CapabilityLookup } from '../src/capabilities/index.js';
import type { Config } from '../src/config.js';
import type { Logger } from '../src/log.js';
import type { Route } from '../src/http/index.js';
import type { Tracing } from '../src/observability/index.js';
import type { Store } from '../src/db/index.js';
import type { ImageSource } from '../src/turns/index.js';
import type { ModelResolver } from '../src/llm/index.js';
import { createOrgTurnCap } from '../src/api/turns/index.js';
import { createMessageQueue, createQueueDispatcher, createSessionStatus, type SessionStatusStore } from '../src/turns/index.js';
import type { ToolContextFactory } from './session/steps/tool-context.js';
import { turnRoutes } from '../src/api/turns/index.js';
import { createTurnRunner } from './session/turn-runner.js';
import type { TurnRunnerOptions } from './session/turn-runner-deps.js';
import type { FoldObserver } from './session/log/snapshot-store.js';
import { createTurnService, type TurnService } from '../src/api/turns/index.js';
import { createReplySchemaChecks, type ReplySchemaChecks } from '../src/offthread/index.js';
import { startStuckTurnSweeper } from './recovery/stuck-turn-sweeper.js';
import { createTurnWorker, type TurnWorker } from './session/turn-worker.js';

/** Ports the turn owns; the modules where models, session storage and images live implement them. */
export interface TurnPorts {
  models: ModelResolver;
  toolStorage: ToolContextFactory;
  images: ImageSource;
  /** Structured replies' schema checks (default: on the calling thread; the app passes the parse pool's). */
  replySchemas?: ReplySchemaChecks;
}

export interface TurnModuleDeps extends TurnPorts {
  config: Config;
  store: Store;
  bus: Bus<SessionEvent>;
  log: Logger;
  capabilities: CapabilityLookup;
  /** Turn spans and event trace ids (default: ids only). */
  tracing?: Tracing;
  /** Snapshot loads and events read by turns (metrics). */
  folds?: FoldObserver;
  /** Runner settings beyond the configuration's (tests: short append retry pauses). */
  turnRunner?: Partial<TurnRunnerOptions>;
}

export interface TurnModule {
  /** Turns from outside HTTP too (the scheduler): `service.submitMessage({org_id}, sessionId, content)`. */
  service: TurnService;
  /** POST messages, cancel, tool-results (spec 4.2). */
  routes: Route[];
  /** Starts claiming turns; stop the returned worker before closing the bus. */
  startWorker(): TurnWorker;
}

export function createTurnModule(deps: TurnModuleDeps): TurnModule {
  const { config, store, bus, log, capabilities, tracing, models, toolStorage, images, turnRunner, folds } = deps;
  const status: SessionStatusStore = createSessionStatus(store);
  const queue = createMessageQueue(store);
  const dispatcher = createQueueDispatcher({ queue, status, turns: bus.turns, events: bus.events, log });
  const replySchemas = deps.replySchemas ?? createReplySchemaChecks();
  const ports = { models, toolStorage, images, status, replySchemas };
  const turnCap = createOrgTurnCap(config.ORG_MAX_TURNS_IN_FLIGHT);
  const queueLimits = { perSession: config.SESSION_MAX_QUEUED_MESSAGES, perOrg: config.ORG_MAX_QUEUED_MESSAGES };
  const maxResponseSchemaBytes = config.STRUCTURED_OUTPUT_MAX_SCHEMA_BYTES;
  const service = createTurnService({
    store,
    bus,
    log,
    tracing,
    turnCap,
    queue,
    dispatcher,
    queueLimits,
    maxResponseSchemaBytes,
    ...ports,
  });

  function startWorker(): TurnWorker {
    const runner = createTurnRunner(
      { store, bus, log, capabilities, tracing, queue, dispatcher, ...ports, ...(folds ? { folds } : {}) },
      {
        ...turnRunner,
        maxIterations: config.MAX_ITERATIONS,
        toolTimeoutMs: config.TOOL_TIMEOUT_MS,
        secretCheckWaitMs: config.SECRET_CHECK_WAIT_MS,
        leaseMs: config.TURN_CLAIM_TIMEOUT_MS,
        snapshotIntervalEvents: config.SESSION_SNAPSHOT_INTERVAL_EVENTS,
        compaction: {
          enabled: config.COMPACTION_ENABLED,
          thresholdPercent: config.COMPACTION_THRESHOLD_PERCENT,
          keepRecentPercent: config.COMPACTION_KEEP_RECENT_PERCENT,
          summaryMaxTokens: config.COMPACTION_SUMMARY_MAX_TOKENS,
          defaultContextWindow: config.COMPACTION_DEFAULT_CONTEXT_WINDOW,
          exactCountChars: config.COMPACTION_EXACT_COUNT_CHARS,
          maxResultChars: config.COMPACTION_MAX_RESULT_CHARS,
        },
      },
    );
    const worker = createTurnWorker(
      { turns: bus.turns, runner, log },
      // NATS: two pending pulls keep claiming while one claim is being fenced. SQL: one poller
      // (every claimer wakes on each enqueue, and all but one find nothing).
      {
        workerId: config.INSTANCE_ID ?? `${hostname()}-${process.pid}`,
        concurrency: config.TURN_CONCURRENCY,
        claimers: bus.kind === 'nats' ? 2 : 1,
      },
    );
    worker.start();
    const sweeper = startStuckTurnSweeper(
      { store, turns: bus.turns, events: bus.events, status, log, dispatcher },
      { intervalMs: config.TURN_SWEEP_INTERVAL_MS, minAgeMs: config.TURN_SWEEP_MIN_AGE_MS },
    );
    // The worker itself, not a copy: its `running` and `paused` are getters read later.
    const stopWorker = worker.stop;
    return Object.assign(worker, {
      async stop(opts?: Parameters<TurnWorker['stop']>[0]) {
        sweeper.stop();
        await stopWorker(opts);
      },
    });
  }

  return { service, routes: turnRoutes({ turns: service }), startWorker };
}
