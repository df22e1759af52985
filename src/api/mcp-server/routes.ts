import { Type } from '@sinclair/typebox';
import { ErrorResponse, ref } from '../../../schemas/common.js';
import { route, type Route } from '../../http/index.js';
import type { McpCall } from './server.js';
import type { McpReply } from './web-exchange.js';

const err = ref(ErrorResponse);

/** A JSON-RPC 2.0 message or batch; the SDK checks the rest (our pipeline has bounded its size and depth). */
const McpMessage = Type.Union(
  [Type.Object({}, { additionalProperties: true }), Type.Array(Type.Object({}, { additionalProperties: true }))],
  {
    description:
      'A JSON-RPC 2.0 message of the Model Context Protocol (initialize, tools/list, tools/call, notifications) or a batch of them.',
  },
);

/** The JSON-RPC answer(s) to the request's request(s), when answered as JSON. */
const McpAnswer = Type.Union(
  [Type.Object({}, { additionalProperties: true }), Type.Array(Type.Object({}, { additionalProperties: true }))],
  {
    description:
      'The JSON-RPC 2.0 answer of the Model Context Protocol, or the answers of a batch. A tools/call with `_meta.progressToken` is answered as `text/event-stream` instead: `notifications/progress` while the turn runs, then the answer (`event: message` frames).',
  },
);

/** `/v1/mcp` (decision 0094, "Serving agents"): POST only, as a stateless Streamable HTTP server is. */
export function mcpServerRoutes({ serve }: { serve: (call: McpCall) => Promise<McpReply> }): Route[] {
  return [
    route(
      {
        method: 'POST',
        path: '/v1/mcp',
        auth: 'user',
        summary:
          "The organisation's agents as an MCP server (Streamable HTTP, stateless; JSON answers, SSE for calls that ask for progress): one tool per agent runs a turn",
        tags: ['mcp'],
        schema: {
          body: McpMessage,
          response: { 200: { json: McpAnswer, raw: 'text/event-stream' }, 202: null, 400: err, 401: err, 406: err, 415: err },
        },
      },
      async ({ body, headers }, { principal, clientGone }) => serve({ principal, headers, body, clientGone }),
    ),
  ];
}
