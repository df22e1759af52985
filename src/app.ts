import { hostname } from 'node:os';
import type { DestinationStream } from 'pino';
import { namedSchemas } from '../schemas/index.js';
import { ErrorResponse } from '../schemas/common.js';
import { createAgentsModule } from './api/agents/index.js';
import { createAuthApiModule } from './api/auth/index.js';
import { createCapabilitiesModule } from './api/capabilities/index.js';
import { createConnectionsModule } from './api/connections/index.js';
import { createEventsModule } from './api/events/index.js';
import { createFsModule } from './api/fs/index.js';
import { createHarnessesModule } from './api/harnesses/index.js';
import { createImagesModule } from './api/images/index.js';
import { createApiRoutes } from './api/index.js';
import { createLlmModelsModule } from './api/llm-models/index.js';
import { createMetricsModule } from './api/metrics/index.js';
import { createOrgsModule } from './api/orgs/index.js';
import { createSessionsModule } from './api/sessions/index.js';
import { createStorageModule } from './api/storage/index.js';
import { createSystemModule, type HealthCheck } from './api/system/index.js';
import { createUsersModule } from './api/users/index.js';
import { createScheduler, createTurnModule, type TurnRunnerOptions, type TurnWorker } from '../actors/index.js';
import { createConnectionLimits } from './events/connection-limits.js';
import { createSessionHub } from './events/session-hub.js';
import { withAccumulatedDeltas } from './events/accumulating-log.js';
import { createObservability, instrumentBus } from './observability/index.js';
import { createAuthModule, createSessionOwners, ensureBootstrapAdmin, SESSION_OWNERS_DEFAULTS } from './auth/index.js';
import { createBus, type Bus } from './bus/index.js';
import { createCapabilityRegistry, createSqlSandbox, parseHostAllowlist } from './capabilities/index.js';
import type { Config } from './config.js';
import { loadKeyring } from './crypto/index.js';
import type { LlmProviderType } from './llm/index.js';
import {
  buildOpenApi,
  createClientAddressResolver,
  createHttpServer,
  createPipeline,
  createRouter,
  createValidation,
  parseCorsOrigins,
  type Route,
} from './http/index.js';
import { createLogger, type Logger } from './log.js';
import { createGrepPool, createParsePool, htmlConverterOf } from './offthread/index.js';
import type { AppServices } from './services.js';
import { createIdempotencyKeys, createProcessLiveness, createStore } from './db/index.js';
import { acquireDataDirLock, type DataDirLock } from './db/data-dir-lock.js';
import type { EmbeddedDatabase } from './db/pglite-thread.js';
import { createStorage } from './session-storage/index.js';
import { createConsoleSite } from './console/site.js';
import { createTracing, otlpTracesUrl } from './observability/tracing.js';
import { SERVICE_VERSION } from './version.js';
import { createInstanceOps } from './observability/instance-ops.js';
import { createStartPhases, type StartPhases } from './start-phases.js';

/** The API's version in the OpenAPI document (the package version is SERVICE_VERSION). */
const API_VERSION = '1.0.0';

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
  wrapBus?: (bus: Bus) => Bus;
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
 * The composition root: builds config-driven dependencies in order, serves HTTP, and closes
 * everything in reverse order (style rule 17).
 */
export async function createApp(
  config: Config,
  {
    logDestination,
    llmSyncBaseUrlOverride,
    dataDirLock,
    wrapBus,
    turnRunner,
    startPhases,
    log: rootLog,
    embeddedDatabase,
  }: AppOptions = {},
) {
  const log: Logger = rootLog ?? createLogger(config.LOG_LEVEL, logDestination);
  const phases = startPhases ?? createStartPhases();
  phases.attach(log);
  const closers: { name: string; close(): Promise<void> }[] = [];
  const instanceId = config.INSTANCE_ID ?? `${hostname()}-${process.pid}`;
  const startedAt = Date.now();
  try {
    // Single writer: PGlite files (and the embedded key) belong to one process (src/db/data-dir-lock.ts).
    const lock =
      config.mode === 'embedded'
        ? (dataDirLock ??
          (await acquireDataDirLock(config.DATA_DIR, { holder: 'service', host: config.HOST, port: config.PORT, action: 'cannot start' })))
        : undefined;
    if (lock) closers.unshift({ name: 'data-dir-lock', close: async () => lock.release() });
    const tracing = await phases.time('tracing', () =>
      createTracing(
        {
          tracesUrl: otlpTracesUrl(config.OTEL_EXPORTER_OTLP_ENDPOINT, config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT),
          serviceName: config.OTEL_SERVICE_NAME,
          serviceVersion: SERVICE_VERSION,
          instanceId,
          role: config.ROLE,
          exportDelayMs: config.OTEL_BSP_SCHEDULE_DELAY,
        },
        { log },
      ),
    );
    closers.unshift({ name: 'tracing', close: () => tracing.close() });
    const { keyring, created: keyCreated, path: keyPath } = await phases.time('keyring', () => loadKeyring(config));
    if (keyCreated) log.warn({ path: keyPath }, 'generated a secrets encryption key for embedded mode; keep it with the data directory');
    // The database and NATS are independent: connecting to both at once (migrations on one,
    // stream convergence on the other) shortens a start by the shorter of the two (issue 13 item 7).
    const [storeResult, natsResult] = await Promise.allSettled([
      createStore({
        databaseUrl: config.DATABASE_URL,
        dataDir: config.DATA_DIR,
        poolMax: config.DATABASE_POOL_MAX,
        preparedStatements: config.DATABASE_PREPARED_STATEMENTS,
        expectedInstances: config.EXPECTED_INSTANCES,
        log,
        phases,
        embeddedDatabase,
      }),
      config.NATS_URL
        ? createBus({
            kind: 'nats',
            url: config.NATS_URL,
            log,
            shards: config.NATS_EVENT_SHARDS,
            ackWaitMs: config.TURN_CLAIM_TIMEOUT_MS,
            auth: {
              credsFile: config.NATS_CREDS,
              nkeySeed: config.NATS_NKEY_SEED,
              tls: { caFile: config.NATS_TLS_CA, certFile: config.NATS_TLS_CERT, keyFile: config.NATS_TLS_KEY },
            },
            replicas: config.NATS_REPLICAS === 'auto' ? 'auto' : Number(config.NATS_REPLICAS),
            phases,
            role: config.ROLE,
          })
        : null,
    ]);
    // Register whatever opened before failing, so the error path closes it.
    if (storeResult.status === 'fulfilled') closers.unshift({ name: 'store', close: () => storeResult.value.close() });
    if (natsResult.status === 'fulfilled' && natsResult.value) {
      const natsBus = natsResult.value;
      closers.unshift({ name: 'bus', close: () => natsBus.close() });
    }
    if (storeResult.status === 'rejected') throw storeResult.reason;
    if (natsResult.status === 'rejected') throw natsResult.reason;
    const store = storeResult.value;
    let bareBus = natsResult.value;
    if (!bareBus) {
      const localBus = await createBus({ kind: 'local', store, log, leaseMs: config.TURN_CLAIM_TIMEOUT_MS });
      closers.unshift({ name: 'bus', close: () => localBus.close() });
      bareBus = localBus;
    }
    const busForHealth = bareBus;
    const checks: HealthCheck[] = [
      { name: 'database', check: () => store.ping() },
      { name: 'bus', check: () => busForHealth.ping() },
    ];
    const metricsOn = config.METRICS_TOKEN !== undefined || config.METRICS_PORT !== undefined;
    const observability = createObservability(
      { sql: store.sql, log, checks },
      {
        instanceId,
        role: config.ROLE,
        mode: config.mode,
        version: SERVICE_VERSION,
        metrics: metricsOn,
        flushMs: config.TIMESERIES_FLUSH_MS,
      },
    );
    closers.unshift({ name: 'observability', close: () => observability.close() });
    // Claims, completions and appends are counted here, not inside the turn engine.
    const instrumented = instrumentBus(bareBus, observability.bus);
    const bus = wrapBus ? wrapBus(instrumented) : instrumented;

    const bootstrap = await phases.time('bootstrap-admin', () =>
      ensureBootstrapAdmin({
        store,
        log,
        adminApiKey: config.BOOTSTRAP_ADMIN_API_KEY,
        keyFileDir: config.mode === 'embedded' ? config.DATA_DIR : undefined,
        consoleUrl: config.PORT ? consoleUrlOf(config.HOST, config.PORT) : undefined,
      }),
    );

    const llm = createLlmModelsModule({
      store,
      keyring,
      log,
      systemDefault: config.LLMSIM_ENABLED ? 'llmsim' : null,
      syncBaseUrlOverride: llmSyncBaseUrlOverride,
      llm: {
        llmsim: { maxTokens: config.LLMSIM_MAX_TOKENS, maxWaitMs: config.LLMSIM_MAX_WAIT_MS },
        ...(observability.llm ? { observer: observability.llm } : {}),
      },
      allowPrivateHosts: parseHostAllowlist(config.LLM_PROVIDER_ALLOWED_PRIVATE_HOSTS),
    });
    await phases.time('llm-providers', async () => {
      await llm.upgradeLegacyKeys();
      if (bootstrap.created) await llm.seedFromEnv(config);
    });
    const { modelResolver } = llm;

    const auth = await phases.time('auth', () => createAuthModule({ config, store, log, keyring }));
    const parsePool = createParsePool({
      workers: config.PARSE_WORKERS,
      timeoutMs: config.PARSE_TIMEOUT_MS,
      memoryMb: config.PARSE_WORKER_MEMORY_MB,
      queueMax: config.PARSE_QUEUE_MAX,
      queueMaxPerOrg: config.PARSE_QUEUE_MAX_PER_ORG,
      queueMaxPerCaller: config.PARSE_QUEUE_MAX_PER_CALLER,
      ...(config.PARSE_WORKERS_PER_ORG ? { workersPerOrg: config.PARSE_WORKERS_PER_ORG } : {}),
    });
    closers.unshift({ name: 'parse-pool', close: () => parsePool.close() });
    const capabilities = createCapabilityRegistry({
      builtin: {
        webFetch: {
          allowPrivateHosts: parseHostAllowlist(config.WEB_FETCH_ALLOWED_PRIVATE_HOSTS),
          convertHtml: htmlConverterOf(parsePool),
          maxConvertChars: config.WEB_FETCH_MAX_CONVERT_CHARS,
        },
      },
    });
    const models = llm.service.lookup;
    const agents = createAgentsModule({ store, capabilities, models, parse: parsePool.run, maxAgentsPerOrg: config.ORG_MAX_AGENTS });
    const harnesses = createHarnessesModule({ store, capabilities, models });
    await phases.time('harnesses', () => harnesses.service.ensureBuiltIns());
    const sqlSandbox = createSqlSandbox({
      workers: config.SQL_WORKERS,
      timeoutMs: config.SQL_STATEMENT_TIMEOUT_MS,
      memoryBytes: config.SQL_MEMORY_LIMIT_MB * 1024 * 1024,
      queueMax: config.SQL_QUEUE_MAX,
      queueMaxPerKey: config.SQL_QUEUE_MAX_PER_SESSION,
      queueMaxPerOrg: config.SQL_QUEUE_MAX_PER_ORG,
      ...(config.SQL_WORKERS_PER_ORG ? { workersPerOrg: config.SQL_WORKERS_PER_ORG } : {}),
    });
    closers.unshift({ name: 'sql-sandbox', close: () => sqlSandbox.close() });
    const grepPool = createGrepPool({ workers: config.GREP_WORKERS, timeoutMs: config.GREP_TIMEOUT_MS, queueMax: config.GREP_QUEUE_MAX });
    closers.unshift({ name: 'grep-pool', close: () => grepPool.close() });
    const storage = createStorage(
      { store, keyring, log },
      {
        fsQuotaBytes: config.SESSION_FS_QUOTA_BYTES,
        sqlSandbox,
        grepPool,
        maxSqlDatabaseBytes: config.SQL_DATABASE_MAX_BYTES,
        maxSqlDatabases: config.SQL_DATABASES_PER_SESSION,
        kvMaxEntries: config.SESSION_KV_MAX_ENTRIES,
        kvMaxBytes: config.SESSION_KV_MAX_BYTES,
        maxSecrets: config.SESSION_MAX_SECRETS,
        maxSchedules: config.SESSION_MAX_SCHEDULES,
        maxImagesPerSession: config.SESSION_MAX_IMAGES,
        imageQuotaBytes: config.SESSION_IMAGE_QUOTA_BYTES,
        maxConnections: config.USER_MAX_CONNECTIONS,
        orgMaxStorageBytes: config.ORG_MAX_STORAGE_BYTES,
      },
    );
    const sessionOwners = createSessionOwners(SESSION_OWNERS_DEFAULTS);
    const sessions = createSessionsModule({
      store,
      bus,
      log,
      agents: agents.service,
      harnesses: harnesses.service,
      capabilities,
      models,
      connections: storage,
      starterFiles: storage,
      owners: sessionOwners,
      maxSessionsPerOrg: config.ORG_MAX_SESSIONS,
    });
    const turns = createTurnModule({
      config,
      store,
      bus,
      log,
      capabilities,
      tracing,
      models: modelResolver,
      toolStorage: storage.toolStorage,
      images: storage.imageSource,
      turnRunner,
    });
    // Readers get deltas with `accumulated`; the log stores them without (issue 30 item 2).
    const served = { events: withAccumulatedDeltas(bus.events), signals: bus.signals };
    const hub = createSessionHub({ bus: served, log });
    closers.unshift({ name: 'sse-hub', close: async () => hub.close() });
    const streamLimits = createConnectionLimits({
      perSession: config.SSE_MAX_PER_SESSION,
      perOrg: config.SSE_MAX_PER_ORG,
      global: config.SSE_MAX_GLOBAL,
      expectedInstances: config.EXPECTED_INSTANCES,
    });
    const services: AppServices = {
      config,
      log,
      store,
      bus,
      auth,
      keyring,
      storage,
      hub,
      streamLimits,
    };
    // Built on every role: the worker needs no routes, but the services stay reachable (tests, benches).
    const modules = { agents, harnesses, sessions, llmProviders: llm.providers, llmModels: llm, turns };
    phases.lap('services');
    const routes: Route[] = [];
    routes.push(...createSystemModule({ checks, openApi: () => openApi }).routes);
    const { scrape } = observability;
    const metrics = createMetricsModule({ timeseries: observability.timeseries, scrape: scrape ?? undefined, token: config.METRICS_TOKEN });
    // /metrics on the main port only behind its token; with METRICS_PORT it is served there alone.
    if (scrape && config.METRICS_TOKEN && config.METRICS_PORT === undefined) routes.push(...metrics.prometheusRoutes);
    if (config.ROLE !== 'worker') {
      const api = {
        auth: createAuthApiModule({ store, auth }),
        users: createUsersModule({ store, auth }),
        orgs: createOrgsModule({ store, auth }),
        agents,
        harnesses,
        capabilities: createCapabilitiesModule({ capabilities }),
        sessions,
        fs: createFsModule({ storage }),
        storage: createStorageModule({ storage }),
        images: createImagesModule({ storage }),
        connections: createConnectionsModule({ connections: storage.connections }),
        llmProviders: modules.llmProviders,
        llmModels: modules.llmModels,
        events: createEventsModule({
          store,
          bus: served,
          hub,
          limits: streamLimits,
          owners: sessionOwners,
          listMaxBytes: config.EVENTS_LIST_MAX_BYTES,
        }),
      };
      routes.push(...createApiRoutes(api, { turns: turns.routes }), ...metrics.routes);
    }
    const openApi = buildOpenApi(routes, namedSchemas, { title: 'Agent Session Service', version: API_VERSION, prefix: config.API_PREFIX });
    phases.lap('routes');

    const router = createRouter(routes, config.API_PREFIX);
    const cors = parseCorsOrigins(config.CORS_ALLOWED_ORIGINS);
    const validation = createValidation(namedSchemas);
    // The web console is served where the API is (ROLE=worker serves no API, so no console either).
    const site = config.ROLE !== 'worker' ? createConsoleSite({ apiPrefix: config.API_PREFIX }) : undefined;
    phases.lap('console');
    // Closed after the HTTP server (closers run in reverse): requests still running keep their keys.
    const liveness = createProcessLiveness({ store, log }, { instanceId });
    closers.unshift({ name: 'process-liveness', close: () => liveness.close() });
    const idempotency = createIdempotencyKeys({ store, log, liveness });
    closers.unshift({ name: 'idempotency-keys', close: async () => idempotency.close() });
    const pipeline = createPipeline({
      router,
      validation,
      authenticate: auth.authenticate,
      maxJsonDepth: config.MAX_JSON_DEPTH,
      cors,
      site,
      observer: observability.http,
      tracing,
      idempotency,
      ...(config.RESPONSE_VALIDATION ? { checkRepliesWith: ErrorResponse } : {}),
    });
    // ajv compiles every route's validators here (style rule 6: at start, so a bad schema stops it).
    phases.lap('validators');
    const server = createHttpServer(
      {
        host: config.HOST,
        port: config.PORT,
        maxBodyBytes: config.MAX_BODY_BYTES,
        clientAddress: createClientAddressResolver(config.TRUST_PROXY),
        cors,
        sse: {
          heartbeatMs: config.SSE_HEARTBEAT_MS,
          cycleMs: config.SSE_CYCLE_MS,
          quietMs: config.SSE_CYCLE_QUIET_MS,
          maxBufferBytes: config.SSE_MAX_BUFFER_BYTES,
          observer: observability.sse,
        },
      },
      { log, router, pipeline },
    );
    const port = await phases.time('listen', () => server.listen());
    let worker: TurnWorker | undefined;
    // One shutdown window for both: requests drain while running turns let their tools finish.
    closers.unshift({
      name: 'http and turn worker',
      close: async () =>
        void (await Promise.all([server.close(config.SHUTDOWN_TIMEOUT_MS), worker?.stop({ graceMs: config.SHUTDOWN_TIMEOUT_MS })])),
    });
    lock?.setListening(config.HOST, port);
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
      scrape && config.METRICS_PORT !== undefined
        ? await listenForMetrics(config, { log, validation, routes: metrics.prometheusRoutes })
        : undefined;
    if (metricsPort) closers.unshift({ name: 'metrics-http', close: () => metricsPort.server.close(config.SHUTDOWN_TIMEOUT_MS) });
    observability.bind({ sseStreams: () => server.streamCount(), isCapability: (id) => capabilities.get(id) !== undefined });
    if (config.ROLE !== 'api') {
      worker = turns.startWorker();
      const started = worker;
      observability.bind({ turnsRunning: () => started.running });
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
      closers.unshift({ name: 'scheduler', close: () => scheduler.close() });
    }
    phases.lap('worker');
    if (bus.serveOps) {
      // Distributed mode: `nats micro ls|info|stats` list this instance; ping/status/drain over NATS.
      const ops = createInstanceOps({
        instanceId,
        role: config.ROLE,
        mode: config.mode,
        version: SERVICE_VERSION,
        log,
        healthChecks: checks,
        worker,
        sseConnections: () => server.streamCount(),
        startedAt,
      });
      const opsService = await phases.time('nats-micro', () =>
        bus.serveOps!(
          {
            version: SERVICE_VERSION,
            metadata: {
              instance_id: instanceId,
              role: config.ROLE,
              mode: config.mode,
              host: hostname(),
              pid: String(process.pid),
              port: String(port),
            },
          },
          ops,
        ),
      );
      closers.unshift({ name: 'nats-micro', close: () => opsService.stop() });
    }

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
      close: () => closeAll(closers, log),
    };
  } catch (err) {
    await closeAll(closers, log);
    throw err;
  }
}

/** `/metrics` alone on METRICS_HOST:METRICS_PORT (behind METRICS_TOKEN when that is set too). */
async function listenForMetrics(config: Config, deps: { log: Logger; validation: ReturnType<typeof createValidation>; routes: Route[] }) {
  const router = createRouter(deps.routes);
  const authenticate = async (): Promise<never> => {
    throw new Error('the metrics listener has no authenticated routes');
  };
  const pipeline = createPipeline({ router, validation: deps.validation, authenticate });
  const server = createHttpServer(
    {
      host: config.METRICS_HOST ?? config.HOST,
      port: config.METRICS_PORT!,
      maxBodyBytes: 1024,
      sse: { heartbeatMs: config.SSE_HEARTBEAT_MS, cycleMs: config.SSE_CYCLE_MS, maxBufferBytes: config.SSE_MAX_BUFFER_BYTES },
    },
    { log: deps.log, router, pipeline },
  );
  const port = await server.listen();
  deps.log.info({ port, host: config.METRICS_HOST ?? config.HOST }, 'metrics listening');
  return { server, port };
}

/** The web console's address for the start-up message (a wildcard host shown as localhost). */
function consoleUrlOf(host: string, port: number): string {
  const shown = host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  return `http://${shown}:${port}/console`;
}

async function closeAll(closers: { name: string; close(): Promise<void> }[], log: Logger): Promise<void> {
  for (const c of closers.splice(0)) {
    try {
      await c.close();
    } catch (err) {
      log.warn({ err, component: c.name }, 'error while closing');
    }
  }
}

export type App = Awaited<ReturnType<typeof createApp>>;
