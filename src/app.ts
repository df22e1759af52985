import { hostname } from 'node:os';
import type { DestinationStream } from 'pino';
import type { SessionEvent } from '../schemas/events.js';
import type { Bus } from './bus/index.js';
import type { Config } from './config.js';
import type { DataDirLock, EmbeddedDatabase } from './db/index.js';
import type { LlmProviderType } from './llm/index.js';
import { createLogger, type Logger } from './log.js';
import type { AppServices } from './services.js';
import { createStartPhases, type StartPhases } from './start-phases.js';
import type { TurnRunnerOptions, TurnWorker } from '../actors/index.js';
import { Closers } from './app/closers.js';
import { consoleUrlOf } from './app/console-url.js';
import { buildEventStreams } from './app/event-streams.js';
import { buildHttpServer, listenForMetrics } from './app/http.js';
import { openInfrastructure } from './app/infrastructure.js';
import { buildModules } from './app/modules.js';
import { serveOpsOverBus } from './app/ops.js';
import { buildRoutes } from './app/routes.js';
import { buildTurns, startTurnWorker } from './app/turns.js';

export interface AppOptions {
  /** Where log lines go (tests capture them); default stdout. */
  logDestination?: DestinationStream;
  /** Tests only: vendor URLs that model sync lists from instead of the vendors' defaults. */
  llmSyncBaseUrlOverride?: Partial<Record<LlmProviderType, string>>;
  /**
   * Embedded mode: the lock of DATA_DIR, when the caller took it already (src/main.ts does, before
   * loading the app, so a second start is refused at once). Otherwise createApp takes it.
   */
  dataDirLock?: DataDirLock;
  /** Tests only: wraps the bus the API and the worker use (fault injection); health checks use the bare bus. */
  wrapBus?: (bus: Bus<SessionEvent>) => Bus<SessionEvent>;
  /** Tests only: turn runner settings the configuration does not expose (e.g. append retry pauses). */
  turnRunner?: Partial<TurnRunnerOptions>;
  /** The start's phase timer, when the caller timed phases already (src/main.ts: Node's start, config, modules). */
  startPhases?: StartPhases;
  /** The root logger, when the caller made it already (src/main.ts); otherwise one on `logDestination`. */
  log?: Logger;
  /** Embedded mode: the database thread, when the caller started it already (src/main.ts, while the app's modules load). */
  embeddedDatabase?: Promise<EmbeddedDatabase>;
}

/**
 * The composition root: builds config-driven dependencies in order (src/app/: infrastructure,
 * modules, the turn engine, routes, HTTP, background work), serves HTTP, and closes everything
 * in reverse order (style rule 17).
 */
export async function createApp(config: Config, options: AppOptions = {}) {
  const log: Logger = options.log ?? createLogger(config.LOG_LEVEL, options.logDestination);
  const phases = options.startPhases ?? createStartPhases();
  phases.attach(log);
  const closers = new Closers();
  const instanceId = config.INSTANCE_ID ?? `${hostname()}-${process.pid}`;
  const startedAt = Date.now();
  const deps = { log, phases, closers, instanceId };
  try {
    const { dataDirLock, embeddedDatabase, wrapBus } = options;
    const infra = await openInfrastructure(config, { ...deps, dataDirLock, embeddedDatabase, wrapBus });
    const { bus, observability } = infra;
    const built = await buildModules(config, infra, { ...deps, llmSyncBaseUrlOverride: options.llmSyncBaseUrlOverride });
    const turns = buildTurns(config, infra, built, { log, turnRunner: options.turnRunner });
    const streams = buildEventStreams(config, bus, deps);
    const { store, keyring } = infra;
    const { auth, storage } = built;
    const services: AppServices = { config, log, store, bus, auth, keyring, storage, hub: streams.hub, streamLimits: streams.streamLimits };
    // Built on every role: the worker needs no routes, but the services stay reachable (tests, benches).
    const { agents, harnesses, sessions, llm } = built;
    const modules = { agents, harnesses, sessions, llmProviders: llm.providers, llmModels: llm, turns };
    phases.lap('services');
    const { routes, prometheusRoutes } = buildRoutes(config, infra, built, streams, turns, log);
    phases.lap('routes');
    const { server, validation } = buildHttpServer(config, routes, infra, built, deps);
    const port = await phases.time('listen', () => server.listen());
    let worker: TurnWorker | undefined;
    // One shutdown window for both: requests drain while running turns let their tools finish.
    closers.add('http and turn worker', async () => {
      await Promise.all([server.close(config.SHUTDOWN_TIMEOUT_MS), worker?.stop({ graceMs: config.SHUTDOWN_TIMEOUT_MS })]);
    });
    infra.lock?.setListening(config.HOST, port);
    log.info(
      {
        port,
        host: config.HOST,
        mode: config.mode,
        role: config.ROLE,
        console_url: consoleUrlOf(config.HOST, port),
        since_process_start_ms: phases.sinceProcessStartMs(),
      },
      'agent session service listening',
    );
    const metricsPort =
      prometheusRoutes && config.METRICS_PORT !== undefined
        ? await listenForMetrics(config, { log, validation, routes: prometheusRoutes })
        : undefined;
    if (metricsPort) closers.add('metrics-http', () => metricsPort.server.close(config.SHUTDOWN_TIMEOUT_MS));
    observability.bind({ sseStreams: () => server.streamCount(), isCapability: (id) => built.capabilities.get(id) !== undefined });
    if (config.ROLE !== 'api') worker = startTurnWorker(turns, infra, built, deps);
    phases.lap('worker');
    await serveOpsOverBus(config, bus, infra, { ...deps, startedAt, port, worker, sseConnections: () => server.streamCount() });

    log.info({ since_process_start_ms: phases.sinceProcessStartMs(), phases: phases.durations() }, 'start-up complete');

    return {
      config,
      log,
      services,
      /** The resource modules whose services are reached past HTTP (tests, benches). */
      modules,
      routes,
      server,
      port,
      url: `http://${config.HOST}:${port}`,
      /** The separate /metrics listener (METRICS_PORT), if any. */
      metricsUrl: metricsPort ? `http://${config.METRICS_HOST ?? config.HOST}:${metricsPort.port}` : undefined,
      close: () => closers.closeAll(log),
    };
  } catch (err) {
    await closers.closeAll(log);
    throw err;
  }
}

export type App = Awaited<ReturnType<typeof createApp>>;
