/**
 * The `mcp` capability: tools served by the MCP servers an agent or session lists
 * (docs/decisions/0094-mcp-tools.md). It has no static tools; a turn lists each server's tools when it
 * starts (cached per connection) and offers them as `server__tool`.
 */
import { Type } from '@sinclair/typebox';
import { McpCapabilityConfig } from '../../../schemas/capabilities.js';
import { defineCapability } from '../define.js';
import type { HostRule } from '../web-fetch/address-policy.js';
import type { Resolver } from '../web-fetch/safe-fetch.js';
import type { Capability, CapabilityConfig, DynamicToolsContext } from '../types.js';
import { urlProblem } from './address-check.js';
import { createMcpClientPool } from './client-pool.js';
import { serverTools, type McpLimits, type McpServerConfig } from './server-tools.js';

export const MCP_CAPABILITY_ID = 'mcp';

/** Operator settings (src/config.ts MCP_*; docs/operations.md). */
export interface McpCapabilityOptions extends McpLimits {
  allowPrivateHosts: readonly HostRule[];
  maxResponseBytes: number;
  maxListBytes: number;
  toolsTtlMs: number;
  maxConnections: number;
  maxConnectionsPerOrg: number;
  idleCloseMs: number;
  resolve?: Resolver;
}

export const DEFAULT_MCP_OPTIONS: McpCapabilityOptions = {
  allowPrivateHosts: [],
  callTimeoutMs: 30_000,
  listTimeoutMs: 10_000,
  maxToolsPerServer: 128,
  maxToolSchemaBytes: 16 * 1024,
  maxResponseBytes: 1024 * 1024,
  maxListBytes: 256 * 1024,
  toolsTtlMs: 60_000,
  maxConnections: 256,
  maxConnectionsPerOrg: 32,
  idleCloseMs: 300_000,
};

export interface McpCapability {
  capability: Capability;
  /** Closes every open MCP connection. */
  close(): Promise<void>;
}

/** The capability with its connection pool. */
export function createMcpCapability(options: Partial<McpCapabilityOptions> = {}): McpCapability {
  const opts = { ...DEFAULT_MCP_OPTIONS, ...options };
  const pool = createMcpClientPool({ ...opts, connectTimeoutMs: opts.listTimeoutMs });
  const base = defineCapability({
    id: MCP_CAPABILITY_ID,
    name: 'MCP Tool Servers',
    description: 'Tools served by Model Context Protocol servers (Streamable HTTP or SSE), offered as server__tool.',
    prompt: '',
    tools: [],
    configSchema: Type.Object(McpCapabilityConfig.properties, { additionalProperties: false }),
    // Header values name session secrets: the session's secrets (API, console) come with it.
    features: ['secrets'],
  });
  const capability: Capability = {
    ...base,
    checkConfig: (config) => configProblems(config, opts.allowPrivateHosts),
    async dynamicTools(config: CapabilityConfig, ctx: DynamicToolsContext) {
      const lists = await Promise.all(serversOf(config).map((server) => serverTools(server, ctx, pool, opts)));
      const notes = lists.flatMap((l) => l.notes);
      return {
        tools: lists.flatMap((l) => l.tools),
        prompt: notes.length > 0 ? `## ${base.name}\n${notes.map((n) => `- ${n}`).join('\n')}` : '',
      };
    },
  };
  return { capability, close: () => pool.close() };
}

function serversOf(config: CapabilityConfig): McpServerConfig[] {
  return (config['servers'] as McpServerConfig[] | undefined) ?? [];
}

/** Duplicate names and URLs the address policy refuses, found without DNS (a 422 on write). */
function configProblems(config: CapabilityConfig, rules: readonly HostRule[]): string[] | null {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const [i, server] of serversOf(config).entries()) {
    if (seen.has(server.name)) problems.push(`servers.${i}.name "${server.name}" is used twice`);
    seen.add(server.name);
    const problem = urlProblem(server.url, rules);
    if (problem) problems.push(`servers.${i}.url ${problem}`);
  }
  return problems.length > 0 ? problems : null;
}
