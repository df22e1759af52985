import { createAgentsModule } from '../api/agents/index.js';
import { createHarnessesModule } from '../api/harnesses/index.js';
import { createLlmModelsModule } from '../api/llm-models/index.js';
import { createSessionsModule } from '../api/sessions/index.js';
import { createSessionOwners, createAuthModule, ensureBootstrapAdmin, SESSION_OWNERS_DEFAULTS } from '../auth/index.js';
import {
  createCapabilityRegistry,
  createMcpCapability,
  createSqlSandbox,
  createSubAgentsCapability,
  htmlConverterOf,
  mcpOptionsOf,
  parseHostAllowlist,
} from '../capabilities/index.js';
import type { Config } from '../config.js';
import type { LlmProviderType } from '../llm/index.js';
import type { Logger } from '../log.js';
import { createGrepPool, createParsePool } from '../offthread/index.js';
import { createStorage } from '../session-storage/index.js';
import type { StartPhases } from '../start-phases.js';
import type { Closers } from './closers.js';
import { consoleUrlOf } from './console-url.js';
import type { Infrastructure } from './infrastructure.js';

export interface ModulesDeps {
  log: Logger;
  phases: StartPhases;
  closers: Closers;
  /** Tests only: vendor URLs that model sync lists from instead of the vendors' defaults. */
  llmSyncBaseUrlOverride?: Partial<Record<LlmProviderType, string>>;
}

/**
 * The domain modules every role builds (the worker serves no routes, but the services stay
 * reachable for tests and benches): the first admin, model providers, auth, the off-thread
 * pools, capabilities, agents, harnesses, capability storage and sessions. The turn engine is
 * wired apart (src/app/turns.ts).
 */
export async function buildModules(config: Config, infra: Infrastructure, { log, phases, closers, llmSyncBaseUrlOverride }: ModulesDeps) {
  const { store, keyring, bus, observability } = infra;
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
      llmsim: { maxTokens: config.LLMSIM_MAX_TOKENS, maxWaitMs: config.LLMSIM_MAX_WAIT_MS, contextWindow: config.LLMSIM_CONTEXT_WINDOW },
      ...(observability.llm ? { observer: observability.llm } : {}),
    },
    allowPrivateHosts: parseHostAllowlist(config.LLM_PROVIDER_ALLOWED_PRIVATE_HOSTS),
  });
  await phases.time('llm-providers', async () => {
    await llm.upgradeLegacyKeys();
    if (bootstrap.created) await llm.seedFromEnv(config);
  });
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
  closers.add('parse-pool', () => parsePool.close());
  const mcp = createMcpCapability(mcpOptionsOf(config));
  closers.add('mcp-connections', () => mcp.close());
  // Bound to sessions and turns once the turn module exists (src/app/turns.ts).
  const subAgents = createSubAgentsCapability({ timeoutMs: config.SUBAGENT_TIMEOUT_MS });
  const capabilities = createCapabilityRegistry({
    builtin: {
      mcp: mcp.capability,
      subAgents: subAgents.capability,
      webFetch: {
        allowPrivateHosts: parseHostAllowlist(config.WEB_FETCH_ALLOWED_PRIVATE_HOSTS),
        convertHtml: htmlConverterOf(parsePool),
        maxConvertChars: config.WEB_FETCH_MAX_CONVERT_CHARS,
      },
    },
  });
  const models = llm.service.lookup;
  const agents = createAgentsModule({
    store,
    capabilities,
    models,
    parse: parsePool.run,
    maxAgentsPerOrg: config.ORG_MAX_AGENTS,
    maxCompactionThresholdPercent: config.COMPACTION_THRESHOLD_PERCENT,
  });
  const harnesses = createHarnessesModule({ store, capabilities, models });
  await phases.time('harnesses', () => harnesses.service.ensureBuiltIns());
  const storage = openStorage(config, infra, closers, log);
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
    maxCompactionThresholdPercent: config.COMPACTION_THRESHOLD_PERCENT,
  });
  return { llm, auth, capabilities, subAgents, agents, harnesses, storage, sessionOwners, sessions, parsePool };
}

export type Modules = Awaited<ReturnType<typeof buildModules>>;

/** Capability storage (files, kv, secrets, SQL, schedules, images, connections) and its worker pools. */
function openStorage(config: Config, { store, keyring }: Infrastructure, closers: Closers, log: Logger) {
  const sqlSandbox = createSqlSandbox({
    workers: config.SQL_WORKERS,
    timeoutMs: config.SQL_STATEMENT_TIMEOUT_MS,
    memoryBytes: config.SQL_MEMORY_LIMIT_MB * 1024 * 1024,
    queueMax: config.SQL_QUEUE_MAX,
    queueMaxPerKey: config.SQL_QUEUE_MAX_PER_SESSION,
    queueMaxPerOrg: config.SQL_QUEUE_MAX_PER_ORG,
    ...(config.SQL_WORKERS_PER_ORG ? { workersPerOrg: config.SQL_WORKERS_PER_ORG } : {}),
  });
  closers.add('sql-sandbox', () => sqlSandbox.close());
  const grepPool = createGrepPool({ workers: config.GREP_WORKERS, timeoutMs: config.GREP_TIMEOUT_MS, queueMax: config.GREP_QUEUE_MAX });
  closers.add('grep-pool', () => grepPool.close());
  return createStorage(
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
}
