/**
 * Assembles the turn engine for the composition root: the ports (model resolver, tool
 * storage, images, session status) shared by the API side and the worker, and the worker
 * itself for the `worker` and `all` roles.
 */
import { hostname } from 'node:os';
import type { Bus } from '../bus/ports.js';
import type { CapabilityLookup } from '../capabilities/index.js';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import type { Tracing } from '../observability/tracing.js';
import type { Store } from '../store/index.js';
import type { ImageSource } from './image-source.js';
import type { ModelResolver } from './model-resolver.js';
import { createSessionStatus, type SessionStatusStore } from './session-status.js';
import type { ToolContextFactory } from './tool-context.js';
import { createTurnRunner } from './turn-runner.js';
import { startStuckTurnSweeper } from './stuck-turn-sweeper.js';
import { createTurnWorker, type TurnWorker } from './turn-worker.js';

/** Ports the modules that own models, session storage and images implement. */
export interface TurnEnginePorts {
  models: ModelResolver;
  toolStorage: ToolContextFactory;
  images: ImageSource;
}

export interface TurnEngineDeps {
  config: Config;
  store: Store;
  bus: Bus;
  log: Logger;
  capabilities: CapabilityLookup;
  /** Turn spans and event trace ids (default: ids only). */
  tracing?: Tracing;
}

export function createTurnEngine(deps: TurnEngineDeps, ports: TurnEnginePorts) {
  const { config, store, bus, log, capabilities, tracing } = deps;
  const status: SessionStatusStore = createSessionStatus(store);

  /** Starts claiming turns; stop the returned worker before closing the bus. */
  function startWorker(): TurnWorker {
    const runner = createTurnRunner(
      { store, bus, log, capabilities, tracing, status, ...ports },
      { maxIterations: config.MAX_ITERATIONS, toolTimeoutMs: config.TOOL_TIMEOUT_MS, leaseMs: config.TURN_CLAIM_TIMEOUT_MS },
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
      { store, turns: bus.turns, events: bus.events, status, log },
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

  return { ports: { ...ports, status }, startWorker };
}

export type TurnEngine = ReturnType<typeof createTurnEngine>;
