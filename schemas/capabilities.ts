import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { CapabilityRef } from './common.js';

/** A `$ref` to a named schema that keeps the target's static type. */
const ref = <T extends TSchema>(schema: T) => Type.Unsafe<Static<T>>(Type.Ref(schema.$id!));

/** A JSON object whose keys are not fixed (capability config, JSON Schema documents). */
export const JsonObject = Type.Unsafe<Record<string, unknown>>({ type: 'object' });

/** A capability item on an agent or harness: an id, or `{ref, config?}` (spec 2.1). Kept as sent. */
export const CapabilityItem = Type.Union([Type.String({ minLength: 1, maxLength: 128 }), ref(CapabilityRef)], {
  $id: 'CapabilityItem',
  description:
    'A capability id, or `{ref, config?}` with capability-specific config (for `mcp`: McpCapabilityConfig; for `sub_agents`: SubAgentsCapabilityConfig).',
});

/** One MCP tool server of the `mcp` capability (docs/decisions/0094-mcp-tools.md). */
const McpServerConfig = Type.Object(
  {
    name: Type.String({
      pattern: '^[A-Za-z][A-Za-z0-9-]{0,31}$',
      description: "Unique within the list; the prefix of the server's tool names as offered to the LLM (`name__tool`).",
    }),
    url: Type.String({
      pattern: '^https?://',
      maxLength: 2048,
      description: "The server's endpoint (Streamable HTTP, or SSE for older servers).",
    }),
    headers: Type.Optional(
      Type.Record(Type.String({ pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$" }), Type.String({ maxLength: 8192 }), {
        maxProperties: 20,
        description:
          "Sent with every request to the server. A value may name session secrets as `{{secret:NAME}}`: resolved at call time, sent only to a host the secret's allowed_hosts names, never shown.",
      }),
    ),
    allowed_tools: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 128 }), {
        maxItems: 256,
        uniqueItems: true,
        description: "The server's tool names (as the server names them) to offer; absent: all of them.",
      }),
    ),
    transport: Type.Optional(
      Type.Union([Type.Literal('auto'), Type.Literal('streamable_http'), Type.Literal('sse')], {
        description: '`auto` (default): Streamable HTTP, falling back to SSE when the server refuses it.',
      }),
    ),
  },
  { additionalProperties: false },
);

/** The config of the `mcp` capability (a session's `servers` list replaces the agent's). */
export const McpCapabilityConfig = Type.Object(
  { servers: Type.Optional(Type.Array(McpServerConfig, { maxItems: 10, description: 'The MCP tool servers the agent may call.' })) },
  {
    $id: 'McpCapabilityConfig',
    additionalProperties: false,
    description: 'Config of the `mcp` capability: `{ref: "mcp", config: {servers: [...]}}`.',
  },
);
export type McpCapabilityConfigView = Static<typeof McpCapabilityConfig>;

/** Config of `sub_agents` (docs/decisions/0102-sub-agents.md). */
export const SubAgentsCapabilityConfig = Type.Object(
  {
    agents: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 256 }), {
        maxItems: 32,
        uniqueItems: true,
        description: 'Agents of the organisation (ids or names) this agent may call as tools; each is offered as `agent__<name>`.',
      }),
    ),
    timeout_ms: Type.Optional(
      Type.Integer({
        minimum: 1000,
        maximum: 3_600_000,
        description: "How long a call waits for the child's turn (at most the operator's SUBAGENT_TIMEOUT_MS).",
      }),
    ),
  },
  {
    $id: 'SubAgentsCapabilityConfig',
    additionalProperties: false,
    description: 'Config of the `sub_agents` capability: `{ref: "sub_agents", config: {agents: ["researcher"]}}`.',
  },
);
export type SubAgentsCapabilityConfigView = Static<typeof SubAgentsCapabilityConfig>;

/** A tool as offered to the LLM (preview, capability listings). */
export const ToolSpec = Type.Object({ name: Type.String(), description: Type.String(), parameters: JsonObject }, { $id: 'ToolSpec' });

/** A tool a capability contributes. */
export const CapabilityTool = Type.Object(
  { name: Type.String(), display_name: Type.String(), description: Type.String(), parameters: JsonObject },
  { $id: 'CapabilityTool' },
);

/** One entry of the capability registry (GET /v1/capabilities). */
export const CapabilityInfo = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    description: Type.String(),
    status: Type.Literal('available', { description: 'Every registered capability is `available`.' }),
    system_prompt: Type.String({ description: 'Instructions prepended to the system prompt while the capability is active.' }),
    tools: Type.Array(ref(CapabilityTool)),
    tool_definitions: Type.Array(ref(CapabilityTool), { description: 'The same list under the reference API name.' }),
    config_schema: JsonObject,
    features: Type.Array(Type.String()),
    dependencies: Type.Array(Type.String()),
  },
  { $id: 'CapabilityInfo' },
);

/**
 * Not paginated (spec 4.2: only sessions are): every capability that matches `search`. The earlier
 * API paged this list and its clients read `offset` and `limit`, so both are echoed: 0 and the count
 * returned unless the caller sent them.
 */
export const CapabilityList = Type.Object(
  {
    data: Type.Array(ref(CapabilityInfo)),
    total: Type.Integer({ minimum: 0 }),
    offset: Type.Integer({ minimum: 0, description: 'The offset sent, else 0 (earlier API).' }),
    limit: Type.Integer({ minimum: 0, description: 'The limit sent, else the number of capabilities returned (earlier API).' }),
  },
  { $id: 'CapabilityList' },
);

/** `offset` and `limit` are the earlier API's paging, honoured when sent; without them, the whole registry. */
export const CapabilityListQuery = Type.Object({
  search: Type.Optional(Type.String({ maxLength: 256, description: 'Case-insensitive substring of the id, name or description.' })),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 2_147_483_647 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
});

export const CapabilityIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }) });

export type CapabilityItemInput = Static<typeof CapabilityItem>;
export type CapabilityInfoView = Static<typeof CapabilityInfo>;

export const capabilitySchemas = [
  CapabilityItem,
  McpCapabilityConfig,
  SubAgentsCapabilityConfig,
  ToolSpec,
  CapabilityTool,
  CapabilityInfo,
  CapabilityList,
];
