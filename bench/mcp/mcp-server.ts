/**
 * The MCP server of bench/mcp (its own process): the official SDK's McpServer over Streamable
 * HTTP (one MCP session per client connection), with one tool, `now`, that answers what
 * `get_current_time` answers. Prints `{"port":N}` once listening.
 *
 *   node --import tsx bench/mcp/mcp-server.ts
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

const transports = new Map<string, StreamableHTTPServerTransport>();

function newServer(): McpServer {
  const server = new McpServer({ name: 'bench', version: '1.0.0' });
  server.registerTool(
    'now',
    { description: 'The current time in a time zone', inputSchema: { timezone: z.string() } },
    async ({ timezone }) => ({
      content: [{ type: 'text', text: JSON.stringify({ timezone, iso: new Date().toISOString() }) }],
    }),
  );
  return server;
}

const http = createServer((req, res) => {
  void (async () => {
    const id = req.headers['mcp-session-id'];
    let transport = typeof id === 'string' ? transports.get(id) : undefined;
    if (!transport) {
      if (req.method !== 'POST' || typeof id === 'string') return void res.writeHead(404).end();
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => void transports.set(sid, created),
      });
      created.onclose = () => created.sessionId && transports.delete(created.sessionId);
      await newServer().connect(created);
      transport = created;
    }
    await transport.handleRequest(req, res);
  })().catch(() => res.destroy());
});
http.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: (http.address() as AddressInfo).port })}\n`));
process.once('SIGTERM', () => http.close(() => process.exit(0)));
