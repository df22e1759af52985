/**
 * `/v1/mcp`: the organisation's agents served to MCP clients (docs/decisions/0094-mcp-tools.md,
 * "Serving agents"). The official SDK speaks the protocol: an `McpServer` with the
 * web-standard Streamable HTTP transport in stateless mode, built per request (the SDK's
 * pattern for stateless servers: no MCP session to keep, so any instance answers any request).
 * Answers are JSON, except for a request that asks for progress: its transport answers with an
 * event stream, so the progress notifications can go out before the result. Our route does
 * authentication and scoping before the SDK sees a byte; the tools act for the caller (their
 * sessions are the caller's, their agents the caller's organisation's).
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { CancelledNotificationSchema, type CallToolResult, type ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Principal } from '../../auth/index.js';
import type { Store } from '../../db/index.js';
import { SERVICE_VERSION } from '../../version.js';
import { servedAgents, type ServedAgent } from './agent-tools.js';
import { runAgentTurn, type AgentRunDeps, type AgentRunOutcome } from './run-agent.js';
import { MCP_SESSION_HEADER, sendCancel, watchCancel, type McpCaller } from './call-cancel.js';
import { fromWebResponse, isEventStream, streamReply, toWebRequest, type McpReply } from './web-exchange.js';

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
    const messages = Array.isArray(call.body) ? (call.body as unknown[]) : [call.body];
    // Only a listing or a call needs the agents: initialize and notifications cost no query.
    const listed = messages.some(needsTools) ? await servedAgents(deps.store, call.principal.org_id) : { agents: [], more: false };
    const caller: McpCaller = { principal: call.principal, ...sessionOf(call.headers) };
    const server = new McpServer({ name: 'agent-session-service', version: SERVICE_VERSION }, { capabilities: { tools: {} } });
    for (const agent of listed.agents) {
      server.registerTool(agent.toolName, { title: agent.name, description: agent.description, inputSchema: RunArgs }, (args, extra) =>
        callAgent(deps, call, caller, agent, args, extra),
      );
    }
    // Stateless: the SDK's own handler would look for the request in this server object, which
    // holds none; the call runs under another POST, maybe on another instance (call-cancel.ts).
    server.server.setNotificationHandler(CancelledNotificationSchema, (n) =>
      sendCancel({ signals: deps.bus.signals, log: deps.log }, caller, n.params.requestId),
    );
    const transport = new WebStandardStreamableHTTPServerTransport({
      // An MCP session id only names the client for cancellation; no state is kept under it.
      sessionIdGenerator: messages.some(isInitialize) ? randomUUID : undefined,
      enableJsonResponse: !messages.some(wantsProgress),
      keepAliveMs: 0, // our SSE stream beats (SSE_HEARTBEAT_MS)
    });
    await server.connect(transport);
    let res: Response;
    try {
      res = await transport.handleRequest(toWebRequest('http://mcp.local/v1/mcp', call.headers), { parsedBody: call.body });
    } catch (err) {
      await server.close();
      throw err;
    }
    if (isEventStream(res)) return streamReply(res, () => closeQuietly(server, deps.log));
    try {
      return await fromWebResponse(res);
    } finally {
      await server.close();
    }
  };
}

/** After a streamed answer, in the background: nothing waits for it. */
function closeQuietly(server: McpServer, log: AgentRunDeps['log']): void {
  server.close().catch((err: unknown) => log.warn({ err }, 'could not close an MCP server object'));
}

async function callAgent(
  deps: AgentRunDeps,
  call: McpCall,
  caller: McpCaller,
  agent: ServedAgent,
  args: { message: string; session_id?: string | undefined },
  extra: ToolExtra,
): Promise<CallToolResult> {
  const cancel = watchCancel(deps.bus.signals, caller, extra.requestId);
  let outcome: AgentRunOutcome;
  try {
    outcome = await runAgentTurn(deps, {
      principal: call.principal,
      agent,
      message: args.message,
      ...(args.session_id ? { sessionId: args.session_id } : {}),
      signal: AbortSignal.any([call.clientGone, extra.signal, cancel.signal]),
      ...progressReporter(deps, extra),
    });
  } catch (err) {
    // The SDK would send the message of what is thrown; ours may name internals.
    deps.log.error({ err, agentId: agent.id }, 'MCP tool call failed');
    return { content: [{ type: 'text', text: 'Internal error' }], isError: true };
  } finally {
    cancel.stop();
  }
  const ids = outcome.session_id ? { session_id: outcome.session_id, ...(outcome.turn_id ? { turn_id: outcome.turn_id } : {}) } : {};
  if (!outcome.ok) return { content: [{ type: 'text', text: outcome.error }], structuredContent: ids, isError: true };
  return { content: [{ type: 'text', text: outcome.text }], structuredContent: ids };
}

/** What the SDK hands a tool handler that we use. */
interface ToolExtra {
  signal: AbortSignal;
  requestId: string | number;
  _meta?: { progressToken?: string | number } | undefined;
  sendNotification: (n: ServerNotification) => Promise<void>;
}

/** With a progress token: a notification per finished step, numbered from 1 (the SDK's transport streams them). */
function progressReporter(deps: AgentRunDeps, extra: ToolExtra): { onProgress?: (message: string) => void } {
  const progressToken = extra._meta?.progressToken;
  if (progressToken === undefined) return {};
  let progress = 0;
  return {
    onProgress(message) {
      progress += 1;
      extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress, message } }).catch((err: unknown) => {
        deps.log.debug({ err }, 'an MCP progress notification was not sent');
      });
    },
  };
}

function sessionOf(headers: Readonly<Record<string, string>>): { mcpSessionId?: string } {
  const id = headers[MCP_SESSION_HEADER];
  return id ? { mcpSessionId: id } : {};
}

const methodOf = (m: unknown): unknown => (m as { method?: unknown } | null)?.method;

/** Whether a message of the request lists or calls tools. */
function needsTools(m: unknown): boolean {
  const method = methodOf(m);
  return method === 'tools/list' || method === 'tools/call';
}

function isInitialize(m: unknown): boolean {
  return methodOf(m) === 'initialize';
}

/** A tools/call with `_meta.progressToken`: its answer is streamed. */
function wantsProgress(m: unknown): boolean {
  const params = (m as { params?: { _meta?: { progressToken?: unknown } } } | null)?.params;
  return methodOf(m) === 'tools/call' && params?._meta?.progressToken !== undefined;
}
