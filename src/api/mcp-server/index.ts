// The organisation's agents served over MCP at /v1/mcp (docs/decisions/0094-mcp-tools.md, "Serving agents").
import type { Route } from '../../http/index.js';
import { mcpServerRoutes } from './routes.js';
import { createMcpServe, type McpServeDeps } from './server.js';

export type { McpServeDeps } from './server.js';

export function createMcpServerModule(deps: McpServeDeps): { routes: Route[] } {
  return { routes: mcpServerRoutes({ serve: createMcpServe(deps) }) };
}
