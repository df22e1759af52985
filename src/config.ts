import { Type, type Static } from '@sinclair/typebox';
// Direct, not through http/index.js: the parser is pure and config must not load uWebSockets.js.
import { parseTrustedProxies } from './http/client-address.js';
import { parseCorsOrigins } from './http/cors.js';
// Direct as well: a pure parser, and the capabilities index would load every capability.
import { parseHostAllowlist } from './capabilities/web-fetch/address-policy.js';
import { DEFAULT_MAX_JSON_DEPTH } from './http/input-hygiene.js';
import { parseNatsUrl } from './bus/nats/nats-url.js';
import { DEFAULT_DATA_DIR } from './db/data-dir-lock.js';
import { ajv, resolveRef } from './validation/ajv.js';
import { coerceText } from './validation/coerce.js';
import { applyDefaults } from './validation/defaults.js';

/**
 * The service configuration, read once from the environment and validated here.
 * This is the only module that reads `process.env` (style rule 16).
 */
const ConfigSchema = Type.Object({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8080 }),
  HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  DATA_DIR: Type.String({ minLength: 1, default: DEFAULT_DATA_DIR }),
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  DATABASE_POOL_MAX: Type.Integer({ minimum: 1, maximum: 1000, default: 10 }),
  /** Embedded mode: ms between two rounds of vacuum of the tables with dead rows (PGlite has no autovacuum; 0: never). */
  EMBEDDED_VACUUM_INTERVAL_MS: Type.Integer({ minimum: 0, maximum: 86_400_000, default: 10_000 }),
  /** Off for a pooler that cannot carry named prepared statements (PgBouncer before 1.21, or without max_prepared_statements). */
  DATABASE_PREPARED_STATEMENTS: Type.Boolean({ default: true }),
  NATS_URL: Type.Optional(Type.String({ minLength: 1 })),
  /** Path of a `.creds` file (user JWT + nkey seed) to authenticate to NATS. */
  NATS_CREDS: Type.Optional(Type.String({ minLength: 1 })),
  /** A user nkey seed (`SU…`), or the path of a file holding one. */
  NATS_NKEY_SEED: Type.Optional(Type.String({ minLength: 1 })),
  /** PEM files: the CA of the NATS servers' certificates; this client's certificate and key (mutual TLS). */
  NATS_TLS_CA: Type.Optional(Type.String({ minLength: 1 })),
  NATS_TLS_CERT: Type.Optional(Type.String({ minLength: 1 })),
  NATS_TLS_KEY: Type.Optional(Type.String({ minLength: 1 })),
  NATS_EVENT_SHARDS: Type.Integer({ minimum: 1, maximum: 64, default: 1 }),
  /** Watched sessions of one event shard from which an instance takes the shard's live events through one wildcard subscription; 0 = never. */
  NATS_LIVE_WILDCARD_MIN_SESSIONS: Type.Integer({ minimum: 0, default: 1000 }),
  /** `auto`: min(3, servers in the NATS cluster); 1-5 fixes the replicas of every stream and bucket. */
  NATS_REPLICAS: Type.String({ pattern: '^(auto|[1-5])$', default: 'auto' }),
  API_PREFIX: Type.String({ pattern: '^(/[A-Za-z0-9._~-]+)*$', default: '' }),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    { default: 'info' },
  ),
  BOOTSTRAP_ADMIN_API_KEY: Type.Optional(Type.String({ minLength: 20 })),
  ROLE: Type.Union([Type.Literal('all'), Type.Literal('api'), Type.Literal('worker')], { default: 'all' }),
  INSTANCE_ID: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  EXPECTED_INSTANCES: Type.Integer({ minimum: 1, default: 1 }),
  MAX_BODY_BYTES: Type.Integer({ minimum: 1024, default: 1_200_000 }),
  /** Deepest nesting of arrays and objects in a JSON request body; deeper bodies get 400. */
  MAX_JSON_DEPTH: Type.Integer({ minimum: 8, maximum: 1000, default: DEFAULT_MAX_JSON_DEPTH }),
  SHUTDOWN_TIMEOUT_MS: Type.Integer({ minimum: 0, default: 10_000 }),
  SSE_HEARTBEAT_MS: Type.Integer({ minimum: 10, default: 30_000 }),
  SSE_CYCLE_MS: Type.Integer({ minimum: 100, default: 300_000 }),
  SSE_CYCLE_QUIET_MS: Type.Integer({ minimum: 0, maximum: 60_000, default: 1000 }),
  SSE_MAX_BUFFER_BYTES: Type.Integer({ minimum: 1024, default: 1_048_576 }),
  SSE_MAX_PER_SESSION: Type.Integer({ minimum: 1, default: 100 }),
  SSE_MAX_PER_ORG: Type.Integer({ minimum: 1, default: 10_000 }),
  SSE_MAX_GLOBAL: Type.Integer({ minimum: 1, default: 100_000 }),
  /** A page of `GET …/events` ends once its events take this many bytes of JSON (at least one event; `has_more` says so). */
  EVENTS_LIST_MAX_BYTES: Type.Integer({ minimum: 65_536, default: 4 * 1024 * 1024 }),
  ACCESS_TOKEN_TTL_S: Type.Integer({ minimum: 1, default: 900 }),
  AUTH_CACHE_TTL_MS: Type.Integer({ minimum: 0, maximum: 60_000, default: 1000 }),
  AUTH_CACHE_MAX_ENTRIES: Type.Integer({ minimum: 1, default: 10_000 }),
  REFRESH_TOKEN_TTL_S: Type.Integer({ minimum: 60, default: 30 * 24 * 3600 }),
  STREAM_TOKEN_TTL_S: Type.Integer({ minimum: 1, default: 300 }),
  JWT_SECRET: Type.Optional(Type.String({ minLength: 32 })),
  LOGIN_MAX_ATTEMPTS_PER_EMAIL: Type.Integer({ minimum: 1, default: 5 }),
  LOGIN_MAX_ATTEMPTS_PER_IP: Type.Integer({ minimum: 1, default: 30 }),
  LOGIN_THROTTLE_WINDOW_S: Type.Integer({ minimum: 1, default: 900 }),
  /** Failed `POST /v1/auth/refresh` per client IP within LOGIN_THROTTLE_WINDOW_S (successes do not count). */
  REFRESH_MAX_FAILURES_PER_IP: Type.Integer({ minimum: 1, default: 30 }),
  /** scrypt hashes running at once per instance (unset: half the cores, at least 1); more wait in a line of PASSWORD_HASH_QUEUE_MAX, then 429. */
  PASSWORD_HASH_CONCURRENCY: Type.Optional(Type.Integer({ minimum: 1, maximum: 64 })),
  PASSWORD_HASH_QUEUE_MAX: Type.Integer({ minimum: 0, default: 16 }),
  /** Comma-separated IPs/CIDRs (or `loopback`, `private`) whose X-Forwarded-For is believed; empty: nobody's. */
  TRUST_PROXY: Type.String({ default: '' }),
  /** Browser origins allowed to call the API: comma-separated exact origins, or `*`; empty: CORS off (http/cors.ts). */
  CORS_ALLOWED_ORIGINS: Type.String({ default: '' }),
  /**
   * Check every JSON reply against its route's response schema and answer 500 naming the
   * mismatch (http/pipeline.ts responseCheckStage). For tests and staging; it costs a schema
   * validation per reply.
   */
  RESPONSE_VALIDATION: Type.Boolean({ default: false }),
  SECRETS_ENCRYPTION_KEY: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_.-]+:[A-Za-z0-9+/=]{40,}$' })),
  SECRETS_ENCRYPTION_KEY_PREVIOUS: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_.-]+:[A-Za-z0-9+/=]{40,}$' })),
  /**
   * The claim lease: a running turn renews it every third of this, so a worker that died (SIGKILL,
   * lost host) has its turns redelivered this long after its last renewal (issue 13 item 7).
   */
  TURN_CLAIM_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 4_000 }),
  /** Stuck-turn sweeper (docs/decisions/0067-accepted-turns-always-have-a-job.md). */
  TURN_SWEEP_INTERVAL_MS: Type.Integer({ minimum: 100, default: 15_000 }),
  TURN_SWEEP_MIN_AGE_MS: Type.Integer({ minimum: 100, default: 30_000 }),
  TOOL_TIMEOUT_MS: Type.Integer({ minimum: 10, default: 60_000 }),
  /** How long a tool result's secret check waits out an unreachable database before withholding the result. */
  SECRET_CHECK_WAIT_MS: Type.Integer({ minimum: 0, default: 30_000 }),
  TURN_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 10_000, default: 100 }),
  MAX_ITERATIONS: Type.Integer({ minimum: 1, default: 100 }),
  /** Largest `controls.response_format` JSON Schema, bytes of JSON (docs/operations.md section 38): it is stored with the message and compiled per reply. */
  STRUCTURED_OUTPUT_MAX_SCHEMA_BYTES: Type.Integer({ minimum: 256, maximum: 1024 * 1024, default: 64 * 1024 }),
  /** Events a session's log grows by before its stored snapshot is refreshed (0: none; docs/operations.md §37). */
  SESSION_SNAPSHOT_INTERVAL_EVENTS: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 200 }),
  SESSION_FS_QUOTA_BYTES: Type.Integer({ minimum: 1, default: 100 * 1024 * 1024 }),
  /** Tenant quotas (docs/decisions/0037-tenant-quotas.md). */
  SESSION_KV_MAX_ENTRIES: Type.Integer({ minimum: 1, default: 10_000 }),
  SESSION_KV_MAX_BYTES: Type.Integer({ minimum: 1, default: 32 * 1024 * 1024 }),
  SESSION_MAX_SECRETS: Type.Integer({ minimum: 1, default: 100 }),
  SESSION_MAX_SCHEDULES: Type.Integer({ minimum: 1, default: 500 }),
  SESSION_MAX_IMAGES: Type.Integer({ minimum: 1, default: 100 }),
  SESSION_IMAGE_QUOTA_BYTES: Type.Integer({ minimum: 1, default: 200 * 1024 * 1024 }),
  USER_MAX_CONNECTIONS: Type.Integer({ minimum: 1, default: 20 }),
  /** Per-organisation caps, whatever the tenant does (issue 30 item 6; docs/operations.md, "Per-organisation limits"). */
  ORG_MAX_AGENTS: Type.Integer({ minimum: 1, default: 1000 }),
  ORG_MAX_SESSIONS: Type.Integer({ minimum: 1, default: 10_000 }),
  ORG_MAX_STORAGE_BYTES: Type.Integer({ minimum: 1, default: 10 * 1024 * 1024 * 1024 }),
  ORG_MAX_TURNS_IN_FLIGHT: Type.Integer({ minimum: 1, default: 100 }),
  /** Messages sent while a turn runs, waiting to run (docs/decisions/0097-messages-while-busy.md): 429 past either. */
  SESSION_MAX_QUEUED_MESSAGES: Type.Integer({ minimum: 1, maximum: 1000, default: 20 }),
  ORG_MAX_QUEUED_MESSAGES: Type.Integer({ minimum: 1, default: 1000 }),
  /** `session_sql_database` sandbox (docs/decisions/0032-sql-sandbox-off-thread.md). */
  SQL_STATEMENT_TIMEOUT_MS: Type.Integer({ minimum: 10, default: 5000 }),
  SQL_WORKERS: Type.Integer({ minimum: 1, maximum: 64, default: 2 }),
  SQL_MEMORY_LIMIT_MB: Type.Integer({ minimum: 8, maximum: 4096, default: 64 }),
  SQL_QUEUE_MAX: Type.Integer({ minimum: 1, default: 100 }),
  SQL_QUEUE_MAX_PER_SESSION: Type.Integer({ minimum: 1, default: 8 }),
  /** Fair share of the SQL workers: calls of one organisation waiting or running, and workers it may occupy (default: half). */
  SQL_QUEUE_MAX_PER_ORG: Type.Integer({ minimum: 1, default: 32 }),
  SQL_WORKERS_PER_ORG: Type.Optional(Type.Integer({ minimum: 1, maximum: 64 })),
  SQL_DATABASE_MAX_BYTES: Type.Integer({ minimum: 65536, default: 50 * 1024 * 1024 }),
  SQL_DATABASES_PER_SESSION: Type.Integer({ minimum: 1, default: 20 }),
  /**
   * Comma-separated hosts (`host`, `host:port`, `*.domain`, `*`) that `fetch_url` may reach
   * although they resolve to private, loopback or link-local addresses; empty: none. Tenants
   * (agent and session `allow_hosts`) cannot add to it.
   */
  WEB_FETCH_ALLOWED_PRIVATE_HOSTS: Type.String({ default: '' }),
  /** The same for LLM provider `base_url`s set through the API (providers from the environment are exempt). */
  LLM_PROVIDER_ALLOWED_PRIVATE_HOSTS: Type.String({ default: '' }),
  /** Webhooks (docs/decisions/0095-webhooks.md): hosts endpoint URLs may name although they resolve to private or loopback addresses. */
  WEBHOOK_ALLOWED_PRIVATE_HOSTS: Type.String({ default: '' }),
  /** One delivery attempt's deadline (connect, headers and body) and the most response bytes read. */
  WEBHOOK_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 120_000, default: 10_000 }),
  WEBHOOK_MAX_RESPONSE_BYTES: Type.Integer({ minimum: 0, maximum: 1_048_576, default: 16_384 }),
  /** Deliveries in flight per instance, per endpoint and per organisation (per instance). */
  WEBHOOK_WORKERS: Type.Integer({ minimum: 1, maximum: 1024, default: 16 }),
  WEBHOOK_CONCURRENCY_PER_ENDPOINT: Type.Integer({ minimum: 1, maximum: 256, default: 4 }),
  WEBHOOK_CONCURRENCY_PER_ORG: Type.Integer({ minimum: 1, maximum: 1024, default: 8 }),
  /** Retries: first pause, longest pause (exponential with full jitter between), and how long a delivery is retried. */
  WEBHOOK_RETRY_BASE_MS: Type.Integer({ minimum: 10, default: 5000 }),
  WEBHOOK_RETRY_MAX_DELAY_MS: Type.Integer({ minimum: 10, default: 3_600_000 }),
  WEBHOOK_RETRY_WINDOW_MS: Type.Integer({ minimum: 0, default: 86_400_000 }),
  /** An endpoint is disabled once it has failed this many attempts in a row over at least this long. */
  WEBHOOK_DISABLE_AFTER_FAILURES: Type.Integer({ minimum: 1, default: 10 }),
  WEBHOOK_DISABLE_AFTER_MS: Type.Integer({ minimum: 0, default: 86_400_000 }),
  /** How long a rotated-out secret still signs deliveries (default for the rotate route). */
  WEBHOOK_SECRET_OVERLAP_MS: Type.Integer({ minimum: 0, maximum: 604_800_000, default: 86_400_000 }),
  /** How often an instance looks for due deliveries written by others, and how long it trusts its copy of an organisation's endpoints. */
  WEBHOOK_POLL_MS: Type.Integer({ minimum: 10, maximum: 60_000, default: 1000 }),
  WEBHOOK_ENDPOINT_CACHE_MS: Type.Integer({ minimum: 0, maximum: 60_000, default: 2000 }),
  /** Quotas: endpoints per organisation; deliveries waiting per organisation (beyond it new events are not queued, and counted). */
  WEBHOOK_MAX_ENDPOINTS_PER_ORG: Type.Integer({ minimum: 1, default: 20 }),
  WEBHOOK_MAX_PENDING_PER_ORG: Type.Integer({ minimum: 1, default: 10_000 }),
  /** Finished deliveries (and their attempts) are kept this long for the delivery log. */
  WEBHOOK_RETENTION_MS: Type.Integer({ minimum: 60_000, default: 7 * 86_400_000 }),
  /**
   * The same for MCP tool server URLs (capability `mcp`; docs/decisions/0094-mcp-tools.md); cloud metadata
   * stays refused. The other MCP_* settings bound what one server can cost a turn.
   */
  MCP_ALLOWED_PRIVATE_HOSTS: Type.String({ default: '' }),
  /** Deadline of one MCP tool call, in ms (the turn's TOOL_TIMEOUT_MS still applies). */
  MCP_CALL_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 3_600_000, default: 30_000 }),
  /** Deadline of connecting to a server and listing its tools when a turn starts, in ms. */
  MCP_LIST_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 600_000, default: 10_000 }),
  /** How long a server's tool list is reused before it is listed again, in ms (a `tools/list_changed` notification drops it sooner). */
  MCP_TOOLS_CACHE_TTL_MS: Type.Integer({ minimum: 0, maximum: 86_400_000, default: 60_000 }),
  /** Largest HTTP response body (a JSON answer or an SSE stream) read from an MCP server, in bytes. */
  MCP_MAX_RESPONSE_BYTES: Type.Integer({ minimum: 4096, maximum: 256 * 1024 * 1024, default: 1024 * 1024 }),
  /** Largest answer to one `tools/list` page, in bytes (lower: the SDK validates a listing on the event loop). */
  MCP_MAX_LIST_RESPONSE_BYTES: Type.Integer({ minimum: 4096, maximum: 64 * 1024 * 1024, default: 256 * 1024 }),
  /** Tools offered from one server (the rest are left out, and the LLM is told). */
  MCP_MAX_TOOLS_PER_SERVER: Type.Integer({ minimum: 1, maximum: 1000, default: 128 }),
  /** Largest input schema of one MCP tool, in bytes of JSON (a tool over it is left out, and the LLM is told). */
  MCP_MAX_TOOL_SCHEMA_BYTES: Type.Integer({ minimum: 256, maximum: 1024 * 1024, default: 16 * 1024 }),
  /** Open MCP connections per instance and per organisation (least recently used closed first), and how long an unused one stays open, in ms. */
  MCP_MAX_CONNECTIONS: Type.Integer({ minimum: 1, maximum: 100_000, default: 256 }),
  MCP_MAX_CONNECTIONS_PER_ORG: Type.Integer({ minimum: 1, maximum: 100_000, default: 32 }),
  MCP_IDLE_CLOSE_MS: Type.Integer({ minimum: 1000, maximum: 86_400_000, default: 300_000 }),
  /** `/v1/mcp` (agents served to MCP clients): how long one `tools/call` waits for its turn, in ms; past it the turn is cancelled. */
  MCP_SERVER_TURN_TIMEOUT_MS: Type.Integer({ minimum: 1000, maximum: 3_600_000, default: 300_000 }),
  /**
   * Sub-agents (capability `sub_agents`; docs/decisions/0102-sub-agents.md): how deep child sessions
   * nest (a session made through the API is depth 0), how many child sessions one turn may start,
   * the iteration budget of a child's turn, and how long a call waits for it, in ms. Together they
   * bound what one top-level turn can spend: at most (children per turn)^depth child turns of at
   * most SUBAGENT_MAX_ITERATIONS steps each.
   */
  SUBAGENT_MAX_DEPTH: Type.Integer({ minimum: 0, maximum: 16, default: 3 }),
  SUBAGENT_MAX_CHILDREN_PER_TURN: Type.Integer({ minimum: 1, maximum: 1000, default: 8 }),
  SUBAGENT_MAX_ITERATIONS: Type.Integer({ minimum: 1, maximum: 10_000, default: 25 }),
  SUBAGENT_TIMEOUT_MS: Type.Integer({ minimum: 1000, maximum: 3_600_000, default: 600_000 }),
  /**
   * The built-in `llmsim` model (docs/llmsim.md). Unset: on in embedded mode when no vendor key
   * (OPENAI/ANTHROPIC/GEMINI_API_KEY) is set, as the quick start needs; off otherwise.
   */
  LLMSIM_ENABLED: Type.Optional(Type.Boolean()),
  /** Most tokens one `@tokens` or `@think` directive streams. */
  LLMSIM_MAX_TOKENS: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 10_000 }),
  /** Most time one simulated model call waits in all (`@sleep` and `delay=` together), in ms. */
  LLMSIM_MAX_WAIT_MS: Type.Integer({ minimum: 0, maximum: 3_600_000, default: 60_000 }),
  /** Context compaction (issue 26, docs/operations.md §33): whether a turn compacts before a step that passes the threshold. */
  COMPACTION_ENABLED: Type.Boolean({ default: true }),
  /** Compact when a request would hold more than this share of the model's context window, in percent. */
  COMPACTION_THRESHOLD_PERCENT: Type.Integer({ minimum: 10, maximum: 100, default: 80 }),
  /** The newest history kept verbatim by a compaction fills at most this share of the window, in percent. */
  COMPACTION_KEEP_RECENT_PERCENT: Type.Integer({ minimum: 0, maximum: 80, default: 30 }),
  /** Most tokens of one summary. */
  COMPACTION_SUMMARY_MAX_TOKENS: Type.Integer({ minimum: 100, maximum: 100_000, default: 2_000 }),
  /** The context window assumed for a model whose window neither its record nor its family states. */
  COMPACTION_DEFAULT_CONTEXT_WINDOW: Type.Integer({ minimum: 1_000, maximum: 100_000_000, default: 128_000 }),
  /** Characters of a request tokenised exactly (OpenAI); the rest is counted at the measured ratio. Bounds the event loop's work. */
  COMPACTION_EXACT_COUNT_CHARS: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 32_768 }),
  /** A tool result longer than this is shortened in what the summariser reads. */
  COMPACTION_MAX_RESULT_CHARS: Type.Integer({ minimum: 100, maximum: 1_000_000, default: 2_000 }),
  /** The simulator's context window in its tokens (words): tests drive compaction with small ones. */
  LLMSIM_CONTEXT_WINDOW: Type.Integer({ minimum: 100, maximum: 10_000_000, default: 1_000_000 }),
  /** Parse pool (agent definitions, client tool schemas, fetched HTML): threads, deadline per job, heap per thread, waiting jobs. */
  PARSE_WORKERS: Type.Integer({ minimum: 1, maximum: 64, default: 2 }),
  PARSE_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 5000 }),
  PARSE_WORKER_MEMORY_MB: Type.Integer({ minimum: 32, default: 256 }),
  PARSE_QUEUE_MAX: Type.Integer({ minimum: 1, default: 64 }),
  /** Grep pool (file search patterns and globs): threads, worker time one search may spend, waiting jobs. */
  GREP_WORKERS: Type.Integer({ minimum: 1, maximum: 64, default: 2 }),
  GREP_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 5000 }),
  GREP_QUEUE_MAX: Type.Integer({ minimum: 1, default: 64 }),
  /** Characters of a fetched page's HTML converted to Markdown/text; the rest is cut (flagged truncated). */
  WEB_FETCH_MAX_CONVERT_CHARS: Type.Integer({ minimum: 1024, default: 131_072 }),
  /** Fair share of the parse workers: jobs of one organisation and of one caller (user, session), and workers one organisation may occupy (default: half). */
  PARSE_QUEUE_MAX_PER_ORG: Type.Integer({ minimum: 1, default: 16 }),
  PARSE_QUEUE_MAX_PER_CALLER: Type.Integer({ minimum: 1, default: 4 }),
  PARSE_WORKERS_PER_ORG: Type.Optional(Type.Integer({ minimum: 1, maximum: 64 })),
  /** Prometheus `/metrics`: a bearer token (on the main port, or on METRICS_PORT too); unset with METRICS_PORT unset: metrics off. */
  METRICS_TOKEN: Type.Optional(Type.String({ minLength: 16 })),
  /** A separate listener for `/metrics` only (0: any free port); unset: `/metrics` on the main port when METRICS_TOKEN is set. */
  METRICS_PORT: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
  /** Listen address of METRICS_PORT (default: HOST). */
  METRICS_HOST: Type.Optional(Type.String({ minLength: 1 })),
  /** Distributed mode: how often each instance writes its task counts for the timeseries, in ms. */
  TIMESERIES_FLUSH_MS: Type.Integer({ minimum: 100, maximum: 60_000, default: 5000 }),
  /**
   * OpenTelemetry trace export over OTLP/HTTP (observability/tracing.ts): the collector's base URL
   * (`/v1/traces` is appended) or the full traces URL; neither set: no export (ids still on events).
   */
  OTEL_EXPORTER_OTLP_ENDPOINT: Type.Optional(Type.String({ pattern: '^https?://' })),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: Type.Optional(Type.String({ pattern: '^https?://' })),
  OTEL_SERVICE_NAME: Type.String({ minLength: 1, default: 'agent-session-service' }),
  /** Delay between batched span exports, in ms. */
  OTEL_BSP_SCHEDULE_DELAY: Type.Integer({ minimum: 1, maximum: 600_000, default: 5000 }),
  OPENAI_API_KEY: Type.Optional(Type.String({ minLength: 1 })),
  ANTHROPIC_API_KEY: Type.Optional(Type.String({ minLength: 1 })),
  GEMINI_API_KEY: Type.Optional(Type.String({ minLength: 1 })),
});

/**
 * `embedded`: PGlite under DATA_DIR and the in-process bus (no configuration).
 * `single`: PostgreSQL (DATABASE_URL) with the in-process bus, one instance.
 * `distributed`: PostgreSQL and NATS (DATABASE_URL + NATS_URL), any number of instances.
 */
/** Every setting the service reads (deployment files are checked against it: scripts/validate-k8s.ts). */
export const CONFIG_VARIABLES: readonly string[] = Object.keys(ConfigSchema.properties);

export type RunMode = 'embedded' | 'single' | 'distributed';

export type Config = Readonly<Omit<Static<typeof ConfigSchema>, 'LLMSIM_ENABLED'>> & {
  readonly mode: RunMode;
  /** LLMSIM_ENABLED with its default applied. */
  readonly LLMSIM_ENABLED: boolean;
};

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

const validate = ajv.compile(ConfigSchema);

/** Reads and validates the configuration; throws a one-line ConfigError when it is invalid. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Record<string, unknown> = {}): Config {
  const raw: Record<string, unknown> = {};
  for (const key of Object.keys(ConfigSchema.properties)) {
    const value = env[key];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  Object.assign(raw, overrides);
  applyDefaults(ConfigSchema, coerceText(ConfigSchema, raw), resolveRef);
  if (!validate(raw)) {
    const e = validate.errors![0]!;
    const field = e.instancePath.replace(/^\//, '') || String(e.params['missingProperty'] ?? '');
    throw new ConfigError(`invalid configuration: ${field} ${e.message ?? 'is invalid'}`);
  }
  const cfg = raw as Static<typeof ConfigSchema>;
  if (cfg.NATS_URL && !cfg.DATABASE_URL) {
    throw new ConfigError('invalid configuration: NATS_URL needs DATABASE_URL (instances sharing a bus must share a database)');
  }
  checkNatsAuth(cfg);
  if (cfg.SECRETS_ENCRYPTION_KEY_PREVIOUS && !cfg.SECRETS_ENCRYPTION_KEY) {
    throw new ConfigError('invalid configuration: SECRETS_ENCRYPTION_KEY_PREVIOUS needs SECRETS_ENCRYPTION_KEY');
  }
  try {
    parseTrustedProxies(cfg.TRUST_PROXY);
  } catch (err) {
    throw new ConfigError(`invalid configuration: TRUST_PROXY ${(err as Error).message}`);
  }
  try {
    parseCorsOrigins(cfg.CORS_ALLOWED_ORIGINS);
  } catch (err) {
    throw new ConfigError(`invalid configuration: CORS_ALLOWED_ORIGINS ${(err as Error).message}`);
  }
  for (const key of [
    'WEB_FETCH_ALLOWED_PRIVATE_HOSTS',
    'LLM_PROVIDER_ALLOWED_PRIVATE_HOSTS',
    'MCP_ALLOWED_PRIVATE_HOSTS',
    'WEBHOOK_ALLOWED_PRIVATE_HOSTS',
  ] as const) {
    try {
      parseHostAllowlist(cfg[key]);
    } catch (err) {
      throw new ConfigError(`invalid configuration: ${key} ${(err as Error).message}`);
    }
  }
  if (cfg.METRICS_PORT !== undefined && cfg.METRICS_PORT !== 0 && cfg.METRICS_PORT === cfg.PORT) {
    throw new ConfigError('invalid configuration: METRICS_PORT must differ from PORT');
  }
  if (cfg.METRICS_HOST && cfg.METRICS_PORT === undefined) throw new ConfigError('invalid configuration: METRICS_HOST needs METRICS_PORT');
  const mode: RunMode = cfg.NATS_URL ? 'distributed' : cfg.DATABASE_URL ? 'single' : 'embedded';
  const vendorKey = Boolean(cfg.OPENAI_API_KEY || cfg.ANTHROPIC_API_KEY || cfg.GEMINI_API_KEY);
  return Object.freeze({ ...cfg, mode, LLMSIM_ENABLED: cfg.LLMSIM_ENABLED ?? (mode === 'embedded' && !vendorKey) });
}

/** NATS_URL parses (without echoing it: it may hold a password); one way to authenticate; TLS settings that belong together. */
function checkNatsAuth(cfg: Static<typeof ConfigSchema>): void {
  const others = (['NATS_CREDS', 'NATS_NKEY_SEED', 'NATS_TLS_CA', 'NATS_TLS_CERT', 'NATS_TLS_KEY'] as const).filter(
    (k) => cfg[k] !== undefined,
  );
  if (!cfg.NATS_URL) {
    if (others.length) throw new ConfigError(`invalid configuration: ${others[0]} needs NATS_URL`);
    return;
  }
  let inUrl: boolean;
  try {
    inUrl = parseNatsUrl(cfg.NATS_URL).credentials !== undefined;
  } catch (err) {
    throw new ConfigError(`invalid configuration: NATS_URL ${(err as Error).message}`);
  }
  const methods = [inUrl && 'credentials in NATS_URL', cfg.NATS_CREDS && 'NATS_CREDS', cfg.NATS_NKEY_SEED && 'NATS_NKEY_SEED'].filter(
    Boolean,
  );
  if (methods.length > 1)
    throw new ConfigError(`invalid configuration: use one of ${methods.join(', ')} to authenticate to NATS, not several`);
  if (Boolean(cfg.NATS_TLS_CERT) !== Boolean(cfg.NATS_TLS_KEY))
    throw new ConfigError('invalid configuration: NATS_TLS_CERT and NATS_TLS_KEY go together');
}
