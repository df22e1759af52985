import type { Config } from '../../config.js';
import { parseHostAllowlist } from '../web-fetch/address-policy.js';
import type { McpCapabilityOptions } from './capability.js';

/** The capability's options from the MCP_* settings. */
export function mcpOptionsOf(config: Config): McpCapabilityOptions {
  return {
    allowPrivateHosts: parseHostAllowlist(config.MCP_ALLOWED_PRIVATE_HOSTS),
    callTimeoutMs: config.MCP_CALL_TIMEOUT_MS,
    listTimeoutMs: config.MCP_LIST_TIMEOUT_MS,
    toolsTtlMs: config.MCP_TOOLS_CACHE_TTL_MS,
    maxResponseBytes: config.MCP_MAX_RESPONSE_BYTES,
    maxListBytes: config.MCP_MAX_LIST_RESPONSE_BYTES,
    maxToolsPerServer: config.MCP_MAX_TOOLS_PER_SERVER,
    maxToolSchemaBytes: config.MCP_MAX_TOOL_SCHEMA_BYTES,
    maxConnections: config.MCP_MAX_CONNECTIONS,
    maxConnectionsPerOrg: config.MCP_MAX_CONNECTIONS_PER_ORG,
    idleCloseMs: config.MCP_IDLE_CLOSE_MS,
  };
}
