/**
 * One configured server's tools for a turn, and the tool definitions that call them. Header
 * values are resolved from the session's secrets each time (listing and every call), so a
 * rotated secret applies at once and no value is stored with the config. Caps: at most
 * `maxToolsPerServer` tools, each input schema at most `maxToolSchemaBytes`, descriptions cut;
 * what is left out is said in the turn's instructions.
 */
import type { McpCapabilityConfigView } from '../../../schemas/capabilities.js';
import { resolveRequestHeaders } from '../web-fetch/request-headers.js';
import { ToolError, type DynamicToolsContext, type JsonSchema, type ToolContext, type ToolDefinition } from '../types.js';
import { connectionKey, type McpClientPool } from './client-pool.js';
import type { McpConnection, McpTarget } from './connection.js';
import { mcpFailure } from './failures.js';
import { toToolResult } from './results.js';
import { mcpToolName } from './tool-names.js';

export type McpServerConfig = NonNullable<McpCapabilityConfigView['servers']>[number];

export interface McpLimits {
  callTimeoutMs: number;
  listTimeoutMs: number;
  maxToolsPerServer: number;
  maxToolSchemaBytes: number;
}

const MAX_DESCRIPTION_CHARS = 2_000;

interface ResolvedTarget {
  target: McpTarget;
  key: string;
  /** Takes the values of the secrets sent in headers out of a server's text. */
  redact: (text: string) => string;
}

export interface ServerTools {
  tools: ToolDefinition[];
  notes: string[];
}

/** Lists one server's tools (never throws: a failure is a note and no tools). */
export async function serverTools(
  server: McpServerConfig,
  ctx: DynamicToolsContext,
  pool: McpClientPool,
  limits: McpLimits,
): Promise<ServerTools> {
  const signal = AbortSignal.timeout(limits.listTimeoutMs);
  let conn: McpConnection | null = null;
  try {
    const resolved = await resolveTarget(server, ctx);
    conn = await pool.connection(ctx.org_id, resolved.key, resolved.target, signal);
    const listing = await conn.listTools(limits.maxToolsPerServer, signal, limits.listTimeoutMs);
    return toDefinitions(server, listing.tools, listing.more, resolved.redact, pool, limits);
  } catch (err) {
    const failure = mcpFailure(err, server.name, { signal, failure: conn?.failure ?? null, timeoutMs: limits.listTimeoutMs, redact: null });
    const message = failure instanceof ToolError ? failure.message : `MCP server "${server.name}" could not be listed.`;
    return { tools: [], notes: [`${message} Its tools are not available in this turn.`] };
  }
}

function toDefinitions(
  server: McpServerConfig,
  listed: {
    name: string;
    title?: string | undefined;
    description?: string | undefined;
    inputSchema: object;
    annotations?: { title?: string | undefined } | undefined;
  }[],
  more: boolean,
  redact: (text: string) => string,
  pool: McpClientPool,
  limits: McpLimits,
): ServerTools {
  const allowed = server.allowed_tools ? new Set(server.allowed_tools) : null;
  const notes: string[] = [];
  if (more)
    notes.push(
      `MCP server "${server.name}" has more than ${limits.maxToolsPerServer} tools: only the first ${limits.maxToolsPerServer} are offered (MCP_MAX_TOOLS_PER_SERVER).`,
    );
  const tools: ToolDefinition[] = [];
  for (const t of listed) {
    if (allowed && !allowed.has(t.name)) continue;
    const schema = redact(JSON.stringify(t.inputSchema));
    if (Buffer.byteLength(schema) > limits.maxToolSchemaBytes) {
      notes.push(
        `MCP tool "${redact(t.name).slice(0, 128)}" of server "${server.name}" has an input schema over ${limits.maxToolSchemaBytes} bytes (MCP_MAX_TOOL_SCHEMA_BYTES): not offered.`,
      );
      continue;
    }
    tools.push({
      name: mcpToolName(server.name, t.name),
      display_name: redact(t.title ?? t.annotations?.title ?? t.name).slice(0, 200),
      description: redact(t.description ?? '').slice(0, MAX_DESCRIPTION_CHARS),
      parameters: { ...(JSON.parse(schema) as JsonSchema), type: 'object' },
      execute: (args, ctx) => callTool(server, t.name, args, ctx, pool, limits),
    });
  }
  return { tools, notes };
}

async function callTool(server: McpServerConfig, tool: string, args: unknown, ctx: ToolContext, pool: McpClientPool, limits: McpLimits) {
  if (args !== undefined && args !== null && (typeof args !== 'object' || Array.isArray(args)))
    throw new ToolError('Invalid arguments: arguments must be an object');
  const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(limits.callTimeoutMs)]);
  let resolved: ResolvedTarget | null = null;
  let failure: () => string | null = () => null;
  try {
    resolved = await resolveTarget(server, ctx);
    const conn = await pool.connection(ctx.org_id, resolved.key, resolved.target, signal);
    failure = () => conn.failure;
    const result = await conn.callTool(tool, (args ?? {}) as Record<string, unknown>, signal, limits.callTimeoutMs);
    return toToolResult(result, server.name, resolved.redact);
  } catch (err) {
    throw mcpFailure(err, server.name, {
      signal: ctx.signal.aborted ? ctx.signal : signal,
      failure: failure(),
      timeoutMs: limits.callTimeoutMs,
      redact: resolved?.redact ?? ((t) => t),
    });
  }
}

/** The server's URL and headers with `{{secret:NAME}}` filled in (each secret must allow the server's host). */
async function resolveTarget(server: McpServerConfig, ctx: DynamicToolsContext): Promise<ResolvedTarget> {
  const url = new URL(server.url);
  const used: { name: string; value: string }[] = [];
  const headers = await resolveRequestHeaders(
    server.headers ?? {},
    async (name) => {
      const secret = await ctx.secrets.get(name);
      if (secret) used.push({ name, value: secret.value });
      return secret;
    },
    url.hostname,
  );
  const target: McpTarget = { url, headers, transport: server.transport ?? 'auto' };
  const values = used.filter((s) => s.value.length >= 4).sort((a, b) => b.value.length - a.value.length);
  const redact = (text: string) => values.reduce((out, s) => out.split(s.value).join(`[secret:${s.name}]`), text);
  return { target, key: connectionKey(ctx.org_id, target), redact };
}
