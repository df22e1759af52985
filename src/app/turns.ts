/**
 * The turn engine's wiring, in one place: the module (routes, service) every role builds, and on
 * roles that run turns the worker and the scheduler that fires session schedules as turns.
 */
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import { createScheduler, createTurnModule, type TurnModule, type TurnRunnerOptions, type TurnWorker } from '../../actors/index.js';
import { createSubAgentRunner } from '../api/sub-agents/index.js';
import type { Closers } from './closers.js';
import { createReplySchemaChecks } from '../offthread/index.js';
import type { Infrastructure } from './infrastructure.js';
import type { Modules } from './modules.js';

export type { TurnModule };

/** The turn module (service, routes, worker factory) on the app's store, bus and capabilities. */
export function buildTurns(
  config: Config,
  { store, bus, tracing, observability }: Infrastructure,
  { capabilities, llm, storage, subAgents, sessions, parsePool }: Modules,
  { log, turnRunner }: { log: Logger; turnRunner?: Partial<TurnRunnerOptions> },
): TurnModule {
  const turns = createTurnModule({
    config,
    store,
    bus,
    log,
    capabilities,
    tracing,
    ...(observability.folds ? { folds: observability.folds } : {}),
    models: llm.modelResolver,
    toolStorage: storage.toolStorage,
    images: storage.imageSource,
    replySchemas: createReplySchemaChecks(parsePool.run),
    turnRunner,
  });
  subAgents.bind(
    createSubAgentRunner(
      { store, bus, log, sessions: sessions.service, turns: turns.service },
      {
        maxDepth: config.SUBAGENT_MAX_DEPTH,
        maxChildrenPerTurn: config.SUBAGENT_MAX_CHILDREN_PER_TURN,
        maxIterations: config.SUBAGENT_MAX_ITERATIONS,
      },
    ),
  );
  return turns;
}

/** Starts the turn worker and the schedule firing (ROLE all or worker); the caller stops the worker. */
export function startTurnWorker(
  turns: TurnModule,
  { tracing, observability, webhooks }: Infrastructure,
  { storage }: Modules,
  { log, closers, instanceId }: { log: Logger; closers: Closers; instanceId: string },
): TurnWorker {
  const worker = turns.startWorker();
  observability.bind({ turnsRunning: () => worker.running });
  const scheduler = createScheduler(
    {
      queue: storage.scheduleQueue,
      // A root span per fired schedule: its turn's spans and events hang off it.
      submit: async (claim, text) => {
        const span = tracing.startSpan('schedule.fire', { attributes: { 'session.id': claim.session_id } });
        try {
          await tracing.run(span, () =>
            turns.service.submitMessage({ org_id: claim.organization_id }, claim.session_id, [{ type: 'text', text }]),
          );
        } finally {
          span.end();
        }
      },
      log,
    },
    { instanceId },
  );
  scheduler.start();
  closers.add('scheduler', () => scheduler.close());
  webhooks.deliverer.start();
  closers.add('webhook-deliverer', () => webhooks.deliverer.stop());
  return worker;
}
