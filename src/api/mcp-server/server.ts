/**
 * `/v1/mcp`: the organisation's agents served to MCP clients (docs/decisions/0094-mcp-tools.md,
 * "Serving agents"). The official SDK speaks the protocol: an `McpServer` with the
 * web-standard Streamable HTTP transport in stateless mode with JSON responses, built per
 * request (the SDK's pattern for stateless servers: no MCP session to keep, so any instance
 * answers any request). Our route does authentication and scoping before the SDK sees a byte;
 * the tools act for the caller (their sessions are the caller's, their agents the caller's
 * organisation's).
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { Principal } from '../../auth/index.js';
import type { Store } from '../../db/index.js';
import { SERVICE_VERSION } from '../../version.js';
import { servedAgents, type ServedAgent } from './agent-tools.js';
import { runAgentTurn, type AgentRunDeps, type AgentRunOutcome } from './run-agent.js';
import { fromWebResponse, toWebRequest, type McpReply } from './web-exchange.js';

/** The longest message a caller may send (the sub-agent tools' bound). */
const MAX_MESSAGE_CHARS = 100_000;

const RunArgs = {
  message: z.string().min(1).max(MAX_MESSAGE_CHARS).describe('What to ask the agent: the whole task.'),
  session_id: z.uuid().optional().describe("Continue in this session of the agent (one of the caller's, idle); omitted: a new session."),
};

export interface McpServeDeps extends AgentRunDeps {
  store: Store;
}

export interface McpCall {
  principal: Principal;
  headers: Readonly<Record<string, string>>;
  /** The JSON body as our pipeline parsed it (depth and size checked). */
  body: unknown;
  /** Fires when the HTTP client goes away. */
  clientGone: AbortSignal;
}

export function createMcpServe(deps: McpServeDeps) {
  return async function serve(call: McpCall): Promise<McpReply> {
    // Only a listing or a call needs the agents: initialize and notifications cost no query.
    const listed = needsTools(call.body) ? await servedAgents(deps.store, call.principal.org_id) : { agents: [], more: false };
    const server = new McpServer({ name: 'agent-session-service', version: SERVICE_VERSION }, { capabilities: { tools: {} } });
    for (const agent of listed.agents) {
      server.registerTool(agent.toolName, { title: agent.name, description: agent.description, inputSchema: RunArgs }, (args, extra) =>
        callAgent(deps, call, agent, args, extra.signal),
      );
    }
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    try {
      return await fromWebResponse(
        await transport.handleRequest(toWebRequest('http://mcp.local/v1/mcp', call.headers), { parsedBody: call.body }),
      );
    } finally {
      await server.close();
    }
  };
}

async function callAgent(
  deps: AgentRunDeps,
  call: McpCall,
  agent: ServedAgent,
  args: { message: string; session_id?: string | undefined },
  sdkSignal: AbortSignal,
): Promise<CallToolResult> {
  let outcome: AgentRunOutcome;
  try {
    outcome = await runAgentTurn(deps, {
      principal: call.principal,
      agent,
      message: args.message,
      ...(args.session_id ? { sessionId: args.session_id } : {}),
      signal: AbortSignal.any([call.clientGone, sdkSignal]),
    });
  } catch (err) {
    // The SDK would send the message of what is thrown; ours may name internals.
    deps.log.error({ err, agentId: agent.id }, 'MCP tool call failed');
    return { content: [{ type: 'text', text: 'Internal error' }], isError: true };
  }
  const ids = outcome.session_id ? { session_id: outcome.session_id, ...(outcome.turn_id ? { turn_id: outcome.turn_id } : {}) } : {};
  if (!outcome.ok) return { content: [{ type: 'text', text: outcome.error }], structuredContent: ids, isError: true };
  return { content: [{ type: 'text', text: outcome.text }], structuredContent: ids };
}

/** Whether the message (or a message of the batch) lists or calls tools. */
function needsTools(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some((m) => {
    const method = (m as { method?: unknown } | null)?.method;
    return method === 'tools/list' || method === 'tools/call';
  });
}
