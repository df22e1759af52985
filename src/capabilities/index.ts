// Public names of the capabilities folder. Other folders import from here only.
export { ToolError, FEATURES } from './types.js';
export { mcpToolName } from './mcp/tool-names.js';
export type {
  Capability,
  CapabilityConfig,
  CapabilityRef,
  ContentPart,
  DynamicTools,
  DynamicToolsContext,
  Feature,
  JsonSchema,
  NestedTurnInfo,
  ResolvedCapabilities,
  ResolvedCapabilityRef,
  ResolvedTool,
  SubagentStart,
  TextPart,
  ToolContext,
  ToolDefinition,
  ToolResult,
} from './types.js';

export { MAX_SQL_QUERY_ROWS, DEFAULT_KV_LIST_LIMIT, MAX_KV_LIST_LIMIT, CONNECTION_SECRET_PREFIX } from './storage-ports.js';
export { hostAllowed, MAX_SECRET_HOSTS, normalizeSecretHosts, SECRET_HOST_PATTERN } from './secret-hosts.js';
export type {
  CreateScheduleInput,
  FileStat,
  GrepMatch,
  GrepOptions,
  GrepResult,
  KvEntry,
  KvListOptions,
  KvPage,
  ScheduleInfo,
  ScheduleKind,
  ScheduleStatus,
  SecretForUse,
  SecretInfo,
  SecretWrite,
  SessionFs,
  SessionKv,
  SessionSchedules,
  SessionSecrets,
  SessionSql,
  SessionSqlDatabase,
  SqlColumnInfo,
  SqlDatabaseInfo,
  SqlExecResult,
  SqlQueryResult,
  SqlSchemaObject,
  SqlValue,
} from './storage-ports.js';

export { createCapabilityRegistry } from './registry.js';
export type { CapabilityRegistry, CapabilityRegistryOptions } from './registry.js';
export { BUILTIN_CAPABILITY_IDS, builtinCapabilities } from './builtin.js';
export { buildSystemPrompt, normalizeCapabilityRef, resolveCapabilities, validateCapabilityRefs } from './resolve.js';
export type { CapabilityLayers, CapabilityLookup } from './resolve.js';
export { withDynamicTools } from './dynamic-tools.js';
export { capabilityView } from './capability-view.js';
export type { CapabilityView, ToolView } from './capability-view.js';
export { defineCapability, defineTool, jsonResult, textResult, toToolError } from './define.js';
export type { CapabilitySpec, ToolSpec } from './define.js';

export { createWebFetchCapability } from './web-fetch/capability.js';
export { createMcpCapability, DEFAULT_MCP_OPTIONS, MCP_CAPABILITY_ID } from './mcp/capability.js';
export type { McpCapability, McpCapabilityOptions } from './mcp/capability.js';
export { mcpOptionsOf } from './mcp/settings.js';
export { createSubAgentsCapability, DEFAULT_SUB_AGENTS_OPTIONS, SUB_AGENTS_CAPABILITY_ID } from './sub-agents/capability.js';
export type { SubAgentsCapability, SubAgentsCapabilityOptions } from './sub-agents/capability.js';
export type { SubAgentCall, SubAgentInfo, SubAgentOutcome, SubAgentPort } from './sub-agents/port.js';
export { blockedAddressReason, isHostRuleMatch, metadataAddressReason, parseHostAllowlist } from './web-fetch/address-policy.js';
export type { HostRule } from './web-fetch/address-policy.js';
export { portOf, systemResolver } from './web-fetch/safe-fetch.js';
export { requestPinned } from './web-fetch/pinned-request.js';
export type { ResolvedAddress, Resolver } from './web-fetch/safe-fetch.js';
export type { WebFetchCapabilityOptions } from './web-fetch/capability.js';
export type { HtmlConverter } from './web-fetch/content.js';
export { htmlConverterOf } from './web-fetch/html-converter.js';
export type { SqliteDatabase } from './sql/sqlite-engine.js';
export { createSqlSandbox, DEFAULT_SQL_SANDBOX_OPTIONS, SqlTimeoutError } from './sql/sql-sandbox.js';
export type { SqlSandbox, SqlSandboxOptions } from './sql/sql-sandbox.js';
export { SQL_DATABASE_NAME_RE } from './sql/capability.js';
export { cronError, nextCronRun } from './schedule-time.js';
export { MAX_ACTIVE_SCHEDULES } from './session-schedule.js';
export { isValidTimeZone } from './time-zone.js';
export { normalizeSessionPath } from './file-system/paths.js';
export { MAX_FILE_SIZE_LIMIT_BYTES, maxFileSizeBytes } from './file-system/config.js';
