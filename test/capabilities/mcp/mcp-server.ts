/**
 * Real MCP servers for the tests, built with the official SDK's server side (McpServer +
 * StreamableHTTPServerTransport, one per MCP session) on a loopback HTTP port, plus raw HTTP
 * servers that misbehave the way a hostile MCP server would.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

type After = { after(fn: () => unknown): void };

export interface DemoServer {
  url: string;
  /** `url` served over the older HTTP+SSE transport only (GET /sse, POST /messages). */
  sseUrl: string;
  /** Authorization headers the server received, in order. */
  authorizations: string[];
  /** Calls of `slow` whose cancellation reached the server (the handler's signal fired). */
  cancelled: string[];
  /** Calls of `slow` that started. */
  slowStarted: string[];
  /** Adds tool `late` on every connected MCP session (each sends tools/list_changed). */
  addLateTool(): void;
  /** How many MCP sessions (initialize) the server has seen. */
  sessions(): number;
}

function header(extra: { requestInfo?: { headers: Record<string, string | string[] | undefined> } }, name: string): string {
  const v = extra.requestInfo?.headers[name];
  return Array.isArray(v) ? v.join(',') : (v ?? '');
}

function demoTools(server: McpServer, state: DemoServer): void {
  const text = (t: string): CallToolResult => ({ content: [{ type: 'text', text: t }] });
  server.registerTool('echo', { description: 'Echoes text', inputSchema: { text: z.string() } }, async ({ text: t }, extra) => {
    state.authorizations.push(header(extra, 'authorization'));
    return text(`echo: ${t}; auth=${header(extra, 'authorization')}`);
  });
  server.registerTool('fail', { description: 'Always fails' }, async (extra) => ({
    isError: true,
    content: [{ type: 'text', text: `no luck for ${header(extra, 'authorization')}` }],
  }));
  server.registerTool('weather', { title: 'Weather', description: 'Structured', inputSchema: { city: z.string() } }, async ({ city }) => ({
    content: [
      { type: 'text', text: `Sunny in ${city}` },
      { type: 'image', data: Buffer.from('png!').toString('base64'), mimeType: 'image/png' },
      { type: 'resource_link', uri: 'https://example.com/r', name: 'report' },
    ],
    structuredContent: { city, temperature_c: 21 },
  }));
  server.registerTool('slow', { description: 'Waits until cancelled (at most 30 s)' }, async (extra) => {
    const id = String(extra.requestId);
    state.slowStarted.push(id);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 30_000);
      extra.signal.addEventListener('abort', () => {
        state.cancelled.push(id);
        clearTimeout(timer);
        resolve();
      });
    });
    return text('slow done');
  });
  server.registerTool('hang', { description: 'Never answers' }, () => new Promise<CallToolResult>(() => undefined));
  server.registerTool('flood', { description: 'Answers 10 MB' }, async () => text('x'.repeat(10 * 1024 * 1024)));
}

function listen(t: After, handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server: Server = createServer(handler);
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
}

/** The demo server: echo, fail, weather (structured), slow (cancellable), hang, flood; `late` on demand. */
export async function startDemoServer(t: After): Promise<DemoServer> {
  const servers: McpServer[] = [];
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const sseTransports = new Map<string, SSEServerTransport>();
  let late = false;
  const state: DemoServer = {
    url: '',
    sseUrl: '',
    authorizations: [],
    cancelled: [],
    slowStarted: [],
    addLateTool() {
      late = true;
      for (const s of servers)
        s.registerTool('late', { description: 'Added later' }, async () => ({ content: [{ type: 'text', text: 'late tool ran' }] }));
    },
    sessions: () => servers.length,
  };
  const newServer = () => {
    const server = new McpServer({ name: 'demo', version: '1.0.0' });
    demoTools(server, state);
    if (late)
      server.registerTool('late', { description: 'Added later' }, async () => ({ content: [{ type: 'text', text: 'late tool ran' }] }));
    servers.push(server);
    return server;
  };
  const base = await listen(t, (req, res) => {
    void (async () => {
      if (req.url === '/sse' && req.method === 'GET') {
        const transport = new SSEServerTransport('/messages', res);
        sseTransports.set(transport.sessionId, transport);
        return newServer().connect(transport);
      }
      if (req.url?.startsWith('/messages')) {
        const id = new URL(req.url, 'http://x').searchParams.get('sessionId') ?? '';
        const transport = sseTransports.get(id);
        return transport ? transport.handlePostMessage(req, res) : void res.writeHead(404).end();
      }
      if (req.url === '/sse-only') return void res.writeHead(405).end();
      const id = req.headers['mcp-session-id'];
      let transport = typeof id === 'string' ? transports.get(id) : undefined;
      if (!transport) {
        if (req.method !== 'POST' || typeof id === 'string') return void res.writeHead(404).end();
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (sid) => void transports.set(sid, transport!),
        });
        await newServer().connect(transport);
      }
      await transport.handleRequest(req, res);
    })().catch(() => res.destroy());
  });
  state.url = `${base}/mcp`;
  state.sseUrl = `${base}/sse`;
  return state;
}

/**
 * A server whose `tools/list` is whatever `tools` returns (10,000 tools, a 100 KB schema…);
 * `callAnswer`: the raw body every `tools/call` gets instead of an answer (not JSON-RPC).
 */
export async function startListingServer(t: After, tools: () => unknown[], callAnswer?: string): Promise<string> {
  const base = await listen(t, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body: unknown = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : undefined;
      if (callAnswer !== undefined && (body as { method?: string } | undefined)?.method === 'tools/call') {
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(callAnswer);
      }
      const server = new McpServer({ name: 'lister', version: '1.0.0' }, { capabilities: { tools: {} } });
      server.server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: tools() as never }));
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      void server
        .connect(transport)
        .then(() => transport.handleRequest(req, res, body))
        .catch(() => res.destroy());
    });
  });
  return `${base}/mcp`;
}

/** A raw server: accepts connections and never answers. */
export function startHungServer(t: After): Promise<string> {
  return listen(t, () => undefined);
}

/** A raw server that answers every POST with `status` and a body that is not JSON-RPC. */
export function startGarbageServer(t: After, body = 'this is {not json', status = 200): Promise<string> {
  return listen(t, (req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(status, { 'content-type': 'application/json' }).end(body));
  });
}
