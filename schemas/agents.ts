import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { ListOf, Timestamp, Uuid } from './common.js';
import { CapabilityItem, ToolSpec } from './capabilities.js';
import { InitialFile } from './fs.js';
import { ToolApprovals } from './approvals.js';
import { CompactionSettings } from './compaction.js';

/** A `$ref` to a named schema that keeps the target's static type. */
const ref = <T extends TSchema>(schema: T) => Type.Unsafe<Static<T>>(Type.Ref(schema.$id!));

// Size limits (spec 8) are counted in UTF-8 bytes by the service, not here: a field over its
// limit must answer 'Input exceeds allowed limits', which a schema `maxLength` would pre-empt.

export const AgentStatus = Type.Union([Type.Literal('active'), Type.Literal('archived')], { $id: 'AgentStatus' });

/** A tool the client executes (spec 2.2). */
export const ClientTool = Type.Object(
  {
    type: Type.Optional(Type.Literal('client', { default: 'client' })),
    name: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', description: 'Unique per agent; letters, digits, `_`, `-`.' }),
    description: Type.String(),
    parameters: Type.Unsafe<Record<string, unknown>>({
      type: 'object',
      description: 'A JSON Schema with `type: "object"` describing the arguments.',
    }),
  },
  { $id: 'ClientTool', additionalProperties: false },
);

/**
 * A client tool as the earlier public API declares it, in `tools` (`type: "client_side"`);
 * accepted as a client tool. docs/decisions/0044-earlier-api-aliases.md.
 */
export const ToolDeclaration = Type.Object(
  {
    type: Type.Union([Type.Literal('client_side'), Type.Literal('client')], {
      description: 'Only client tools can be declared; server tools come from capabilities.',
    }),
    name: ClientTool.properties.name,
    description: ClientTool.properties.description,
    parameters: ClientTool.properties.parameters,
  },
  { $id: 'ToolDeclaration', additionalProperties: false },
);

const MaxIterations = Type.Union([Type.Integer({ minimum: 1, maximum: 1000 }), Type.Null()], {
  description: 'Maximum reason/act iterations per turn (default 100).',
});

/** Response-only fields a client may echo back on writes; they are ignored. */
const EchoedReadOnly = {
  status: Type.Optional(ref(AgentStatus)),
  harness_id: Type.Optional(Type.String({ format: 'uuid', description: 'Only the `generic` harness (what the view shows).' })),
  created_at: Type.Optional(Type.String()),
  updated_at: Type.Optional(Type.String()),
};

const AgentFields = {
  name: Type.String({ minLength: 1, description: 'At most 2 KB (UTF-8).' }),
  system_prompt: Type.String({ description: 'Base prompt, at most 1 MB (UTF-8); capability instructions are prepended at runtime.' }),
  description: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'At most 10 KB (UTF-8).' })),
  default_model_id: Type.Optional(
    Type.Union([Uuid, Type.Null()], { description: 'A model of the organisation; null removes the override.' }),
  ),
  tags: Type.Optional(Type.Array(Type.String())),
  capabilities: Type.Optional(Type.Array(ref(CapabilityItem), { description: 'At most 250 items.' })),
  client_tools: Type.Optional(Type.Array(ref(ClientTool))),
  max_iterations: Type.Optional(MaxIterations),
  // Earlier public API aliases and fields (docs/decisions/0044-earlier-api-aliases.md).
  tools: Type.Optional(Type.Array(ref(ToolDeclaration), { description: 'Alias of `client_tools` (earlier API); give one of the two.' })),
  model: Type.Optional(
    Type.Union([Type.String({ minLength: 1, maxLength: 1024 }), Type.Null()], {
      description: 'The default model as a model id or a model name of the organisation (earlier API); sets `default_model_id`.',
    }),
  ),
  display_name: Type.Optional(
    Type.Union([Type.String({ maxLength: 2048 }), Type.Null()], { description: 'Shown instead of `name` by clients.' }),
  ),
  parallel_tool_calls: Type.Optional(
    Type.Union([Type.Boolean(), Type.Null()], {
      description: 'false: the server tools of one step run one at a time (default: in parallel).',
    }),
  ),
  tool_approvals: Type.Optional(ToolApprovals),
  compaction: Type.Optional(
    Type.Union([ref(CompactionSettings), Type.Null()], {
      description: "Context compaction of this agent's sessions (a session's settings win field by field); null: the server's.",
    }),
  ),
  initial_files: Type.Optional(
    Type.Array(ref(InitialFile), {
      description: 'Earlier API: only `[]` (what its SDK always sends); starter files are given on session create.',
    }),
  ),
};

/** POST /v1/agents, PUT /v1/agents/{id}, and the document of an import. */
export const AgentCreate = Type.Object(
  { id: Type.Optional(Type.String({ description: 'Client-supplied UUID v4 or v7.' })), ...AgentFields, ...EchoedReadOnly },
  { $id: 'AgentCreate', additionalProperties: false },
);

/** PATCH /v1/agents/{id}: only the given fields change; `status` is never changed. */
export const AgentPatch = Type.Object(
  {
    id: Type.Optional(Type.String()),
    name: Type.Optional(AgentFields.name),
    system_prompt: Type.Optional(AgentFields.system_prompt),
    description: AgentFields.description,
    default_model_id: AgentFields.default_model_id,
    tags: AgentFields.tags,
    capabilities: AgentFields.capabilities,
    client_tools: AgentFields.client_tools,
    max_iterations: AgentFields.max_iterations,
    tools: AgentFields.tools,
    model: AgentFields.model,
    display_name: AgentFields.display_name,
    parallel_tool_calls: AgentFields.parallel_tool_calls,
    tool_approvals: AgentFields.tool_approvals,
    compaction: AgentFields.compaction,
    initial_files: AgentFields.initial_files,
    ...EchoedReadOnly,
  },
  { $id: 'AgentPatch', additionalProperties: false },
);

export const Agent = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    system_prompt: Type.String(),
    default_model_id: Type.Union([Uuid, Type.Null()]),
    tags: Type.Array(Type.String()),
    capabilities: Type.Array(ref(CapabilityItem)),
    client_tools: Type.Array(ref(ClientTool)),
    max_iterations: Type.Union([Type.Integer(), Type.Null()]),
    display_name: Type.Union([Type.String(), Type.Null()]),
    model: Type.Union([Type.String(), Type.Null()], { description: 'The default model as the client named it, else `default_model_id`.' }),
    parallel_tool_calls: Type.Union([Type.Boolean(), Type.Null()]),
    tool_approvals: ToolApprovals,
    compaction: Type.Union([ref(CompactionSettings), Type.Null()]),
    harness_id: Type.String({
      format: 'uuid',
      description:
        'The harness of a session created from this agent alone: the built-in `generic` (earlier API; its SDK requires the field).',
    }),
    status: ref(AgentStatus),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Agent', additionalProperties: false },
);

export const AgentList = ListOf(ref(Agent), 'AgentList', 'agents');

/** Unknown query keys are ignored (cache busters and the like). */
export const AgentListQuery = Type.Object({
  include_archived: Type.Optional(Type.Boolean({ default: false })),
  tag: Type.Optional(Type.Array(Type.String(), { description: 'Only agents carrying every given tag (repeat the key for several).' })),
  search: Type.Optional(
    Type.String({ maxLength: 256, description: 'Case-insensitive substring of the name or description (reference API).' }),
  ),
});

/** `POST /v1/agents/import?from-example=<name>` (reference API): the body is then ignored. */
export const AgentImportQuery = Type.Object({
  'from-example': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 128,
      description: 'Import a shipped example agent (GET /v1/agent-examples) instead of the body.',
    }),
  ),
});

/** One shipped example agent (GET /v1/agent-examples). */
export const AgentExample = Type.Object(
  {
    name: Type.String({ description: 'The value for `from-example`.' }),
    agent_name: Type.String(),
    description: Type.String(),
    tags: Type.Array(Type.String()),
  },
  { $id: 'AgentExample', additionalProperties: false },
);

export const AgentExampleList = ListOf(ref(AgentExample), 'AgentExampleList');

export const AgentPreviewRequest = Type.Object(
  {
    system_prompt: Type.String(),
    capabilities: Type.Optional(Type.Array(ref(CapabilityItem))),
    client_tools: Type.Optional(Type.Array(ref(ClientTool))),
  },
  { $id: 'AgentPreviewRequest', additionalProperties: false },
);

export const AgentPreview = Type.Object(
  { system_prompt: Type.String(), tools: Type.Array(ref(ToolSpec)) },
  { $id: 'AgentPreview', additionalProperties: false },
);

export type AgentCreateInput = Static<typeof AgentCreate>;
export type AgentPatchInput = Static<typeof AgentPatch>;
export type AgentListQueryInput = Static<typeof AgentListQuery>;
export type AgentPreviewInput = Static<typeof AgentPreviewRequest>;
export type ClientToolInput = Static<typeof ClientTool>;
export type ToolDeclarationInput = Static<typeof ToolDeclaration>;
export type AgentView = Static<typeof Agent>;
export type AgentStatusValue = Static<typeof AgentStatus>;

export const agentSchemas = [
  AgentStatus,
  ClientTool,
  ToolDeclaration,
  AgentCreate,
  AgentPatch,
  Agent,
  AgentList,
  AgentExample,
  AgentExampleList,
  AgentPreviewRequest,
  AgentPreview,
];
