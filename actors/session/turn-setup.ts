/**
 * What a turn runs with: the session's configuration snapshot (spec 3.4: a session keeps the
 * agent configuration it was created with, or switched to by PATCH; later edits of the agent or
 * harness do not reach it), the resolved capabilities, the system prompt, the tools offered to
 * the LLM, and the iteration limit. Read at the start of every attempt, so an agent switch
 * applies from the next turn on.
 */
import {
  buildSystemPrompt,
  resolveCapabilities,
  withDynamicTools,
  type CapabilityLookup,
  type CapabilityRef,
  type ResolvedTool,
} from '../../src/capabilities/index.js';
import type { LlmToolDefinition } from '../../src/llm/index.js';
import {
  EFFECTIVE_SESSION_CONFIG_SQL,
  modelProviderSql,
  parseSessionConfig,
  SESSION_LAYERS_JOIN_SQL,
  type ModelProviderRow,
  type Store,
  preparedSql,
} from '../../src/db/index.js';
import {
  compileApprovalPolicy,
  effectiveCompaction,
  type ApprovalPolicyOf,
  type DecideInput,
  type EffectiveCompaction,
  type ModelRef,
  type Usage,
} from '../../src/turns/index.js';
import { unavailableToolStorage, type ToolContextFactory } from './steps/tool-context.js';

export interface ClientToolDef {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface TurnSetup {
  sessionId: string;
  orgId: string;
  /** The user who created the session. */
  ownerUserId: string;
  system: string;
  serverTools: ReadonlyMap<string, ResolvedTool>;
  clientToolNames: ReadonlySet<string>;
  /** The tool approval policy (session rules, then the agent's); absent: every call may run. */
  approvalOf?: ApprovalPolicyOf;
  llmTools: LlmToolDefinition[];
  maxIterations: number;
  /** false: the server tools of one step run one at a time (session, else agent, `parallel_tool_calls`). */
  parallelToolCalls: boolean;
  /** The session's compaction settings over its agent's (decision 0103). */
  compaction: EffectiveCompaction;
  /** First model id among session > agent default > harness default (message controls come first, per turn). */
  modelIds: { session: string | null; agent: string | null; harness: string | null };
  /**
   * The model the setup read picked (message controls given to it > session > agent > harness;
   * null: none set) and its row, read in the same statement (null: not a model of the org).
   */
  model: { id: string | null; row: ModelProviderRow | null };
}

interface SetupRow {
  id: string;
  organization_id: string;
  user_id: string;
  model_id: string | null;
  session_capabilities: CapabilityRef[];
  /** True for a row without a snapshot (written by a pre-0010 instance): `config` is then the live rows'. */
  unsnapshotted: boolean;
  config: unknown;
  picked_model_id: string | null;
  model_row: ModelProviderRow | null;
  /** A sub-agent's iteration budget (migration 0025), when lower than its agent's. */
  budget: number | null;
}

/** A model id that may be a model row's (`isAnyUuid`); others (`llmsim`) match no row. */
const PICKED_MODEL_UUID = `case when pick.model_id ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$'
  then lower(pick.model_id)::uuid end`;

/**
 * The session and its configuration, and the model the turn would pick (`pickModelId`) with its
 * provider. `offset 0` keeps each lateral a subquery evaluated once: pulled up, the configuration
 * expression was copied into every use, which made the statement cost PostgreSQL 1.6 ms to plan
 * and run instead of 0.4 ms (the two statements it replaces cost 0.4 ms together).
 */
const SETUP_QUERY = preparedSql(
  'turn-setup.read',
  `
  select s.id, s.organization_id, s.user_id, s.model_id, s.capabilities as session_capabilities, s.max_iterations as budget,
    s.config is null as unsnapshotted, c.config, pick.model_id as picked_model_id,
    (select to_jsonb(mp) from (${modelProviderSql(PICKED_MODEL_UUID, 's.organization_id')}) mp) as model_row
  from ${SESSION_LAYERS_JOIN_SQL}
    cross join lateral (select ${EFFECTIVE_SESSION_CONFIG_SQL} as config offset 0) c
    cross join lateral (select coalesce(nullif(?::text, ''), s.model_id::text, nullif(c.config #>> '{agent,default_model_id}', ''),
      nullif(c.config #>> '{harness,default_model_id}', '')) as model_id offset 0) pick
  where s.id = ?`,
);

/** Keeps the configuration a row without a snapshot ran its first turn with (and the features that go with it). */
const STORE_SNAPSHOT = `update sessions set config = ?::jsonb, features = ?::jsonb where id = ? and config is null`;

export interface TurnSetupOptions {
  store: Store;
  capabilities: CapabilityLookup;
  /** Iterations per turn when neither agent nor harness sets one (config MAX_ITERATIONS, default 100). */
  defaultMaxIterations: number;
  /** The session's secrets, for run-time tool sources (MCP header values by reference); default: none. */
  toolStorage?: ToolContextFactory;
}

/**
 * Loads a session's turn setup; null when the session no longer exists. `controlsModelId`: the
 * model the turn's message names, when known (a fresh turn's job carries it). `jobUserId`: who
 * started the turn; the tools listed now (MCP headers) may use the creator's connections only
 * for the creator, as the act step's calls may.
 */
export async function loadTurnSetup(
  { store, capabilities, defaultMaxIterations, toolStorage }: TurnSetupOptions,
  sessionId: string,
  controlsModelId?: string,
  jobUserId?: string,
): Promise<TurnSetup | null> {
  const row = (await store.sql<SetupRow>(SETUP_QUERY, [controlsModelId ?? null, sessionId]))[0];
  if (!row) return null;
  const { harness, agent, session } = parseSessionConfig(row.config);
  const layers = { harness: harness.capabilities, agent: agent?.capabilities ?? [], session: row.session_capabilities ?? [] };
  const ref = { session_id: row.id, org_id: row.organization_id };
  const resolved = await withDynamicTools(resolveCapabilities(layers, capabilities), capabilities, async () => ({
    ...ref,
    secrets: (await (toolStorage ?? unavailableToolStorage)({ ...ref, may_use_connections: jobUserId === row.user_id })).secrets,
  }));
  if (row.unsnapshotted)
    await store.sql(STORE_SNAPSHOT, [JSON.stringify({ harness, agent }), JSON.stringify(resolved.features), sessionId]);
  const base = [harness.system_prompt, agent?.system_prompt].filter((p): p is string => !!p && p.trim() !== '').join('\n\n');
  const serverTools = new Map(resolved.tools.map((t) => [t.name, t]));
  // A client tool never shadows a server tool of the same name (the agents module refuses that on write).
  const clientTools = mergeClientTools(agent?.client_tools ?? [], session?.client_tools ?? []).filter((t) => !serverTools.has(t.name));
  return {
    sessionId: row.id,
    orgId: row.organization_id,
    ownerUserId: row.user_id,
    system: buildSystemPrompt(base, resolved),
    serverTools,
    clientToolNames: new Set(clientTools.map((t) => t.name)),
    approvalOf: compileApprovalPolicy(session?.tool_approvals, agent?.tool_approvals),
    llmTools: [
      ...resolved.tools.map((t) => ({ name: t.name, description: t.description, parameters: { ...t.parameters } })),
      ...clientTools.map((t) => ({
        name: t.name,
        description: t.description,
        parameters: t.parameters ?? { type: 'object', properties: {} },
      })),
    ],
    maxIterations: Math.min(
      agent?.max_iterations ?? harness.max_iterations ?? defaultMaxIterations,
      row.budget ?? Number.POSITIVE_INFINITY,
    ),
    parallelToolCalls: session?.parallel_tool_calls ?? agent?.parallel_tool_calls ?? true,
    compaction: effectiveCompaction(agent?.compaction, session?.compaction),
    modelIds: { session: row.model_id, agent: agent?.default_model_id ?? null, harness: harness.default_model_id },
    model: { id: row.picked_model_id, row: row.model_row },
  };
}

/**
 * The agent's client tools plus the session's own (earlier public API, session create `tools`):
 * a session tool replaces the agent's tool of the same name, as the session is the more specific
 * layer (like `model_id`); docs/decisions/0044-earlier-api-aliases.md.
 */
export function mergeClientTools<T extends { name: string }>(agentTools: readonly T[], sessionTools: readonly T[]): T[] {
  if (!sessionTools.length) return [...agentTools];
  const sessionNames = new Set(sessionTools.map((t) => t.name));
  return [...agentTools.filter((t) => !sessionNames.has(t.name)), ...sessionTools];
}

/** What the decider needs of the setup and the session for one step. */
export function decideInputOf(setup: TurnSetup, sessionUsage: Usage, model: ModelRef | null, newId: () => string): DecideInput {
  return {
    maxIterations: setup.maxIterations,
    clientToolNames: setup.clientToolNames,
    toolSource: (name) => setup.serverTools.get(name)?.capability_id ?? null,
    approvalOf: setup.approvalOf,
    sessionOwner: setup.ownerUserId,
    sessionUsage,
    model,
    now: new Date(),
    newId,
  };
}
