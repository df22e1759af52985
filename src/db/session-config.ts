/**
 * The configuration a session runs with (spec 3.4 rules 2 and 3): a copy of its harness and
 * agent as they were when the session was created, the agent part replaced when PATCH switches
 * the agent. Later edits of the agent or harness rows do not reach the session. Stored in
 * `sessions.config` (migration 0010); see docs/decisions/0042-session-configuration-snapshot.md.
 */
import type { CapabilityItemInput } from '../../schemas/capabilities.js';
import type { ClientToolInput } from '../../schemas/agents.js';
import type { ToolApprovalRuleInput } from '../../schemas/approvals.js';
import type { CompactionSettingsInput } from '../../schemas/compaction.js';

/** What a session keeps of its harness. */
export interface HarnessSnapshot {
  system_prompt: string | null;
  capabilities: CapabilityItemInput[];
  default_model_id: string | null;
  max_iterations: number | null;
}

/** What a session keeps of its agent. */
export interface AgentSnapshot extends HarnessSnapshot {
  client_tools: ClientToolInput[];
  /** false: a step's tools run one at a time (absent in copies taken before 0013: the default, parallel). */
  parallel_tool_calls?: boolean | null;
  /** Tool approval rules (decision 0101); absent in copies of agents without any. */
  tool_approvals?: ToolApprovalRuleInput[] | null;
  /** Compaction settings (decision 0103); absent in copies of agents without any. */
  compaction?: CompactionSettingsInput | null;
}

/**
 * What the session itself was created with beyond the spec's fields (earlier public API; see
 * docs/decisions/0044-earlier-api-aliases.md). Kept across agent switches.
 */
export interface SessionAdditions {
  /** Client tools of this session only, merged with the agent's (the session's win a name clash). */
  client_tools?: ClientToolInput[];
  /** Overrides the agent's `parallel_tool_calls`. */
  parallel_tool_calls?: boolean;
  /** Tool approval rules matched before the agent's (decision 0101). */
  tool_approvals?: ToolApprovalRuleInput[];
  /** Compaction settings over the agent's, field by field (decision 0103). */
  compaction?: CompactionSettingsInput;
  locale?: string;
}

export interface SessionConfig {
  harness: HarnessSnapshot;
  agent: AgentSnapshot | null;
  /** Absent when the session added nothing. */
  session?: SessionAdditions;
}

type LayerRow = {
  system_prompt?: string | null;
  capabilities?: CapabilityItemInput[] | null;
  default_model_id?: string | null;
  max_iterations?: number | null;
};

/** The harness part of a snapshot, from a harness row or view. */
export function snapshotHarness(h: LayerRow): HarnessSnapshot {
  return {
    system_prompt: h.system_prompt ?? null,
    capabilities: structuredClone(h.capabilities ?? []),
    default_model_id: h.default_model_id ?? null,
    max_iterations: h.max_iterations ?? null,
  };
}

/** The agent part of a snapshot, from an agent row. */
export function snapshotAgent(
  a: LayerRow & {
    client_tools?: ClientToolInput[] | null;
    parallel_tool_calls?: boolean | null;
    tool_approvals?: ToolApprovalRuleInput[] | null;
    compaction?: CompactionSettingsInput | null;
  },
): AgentSnapshot {
  const snapshot: AgentSnapshot = { ...snapshotHarness(a), client_tools: structuredClone(a.client_tools ?? []) };
  // Only when set, so copies of agents that never used it look as before.
  if (a.parallel_tool_calls != null) snapshot.parallel_tool_calls = a.parallel_tool_calls;
  if (a.tool_approvals?.length) snapshot.tool_approvals = structuredClone(a.tool_approvals);
  if (a.compaction) snapshot.compaction = { ...a.compaction };
  return snapshot;
}

/**
 * SQL for the snapshot of harness `h` and agent `a` as they are now (jsonb), the same shape as
 * `snapshotHarness` / `snapshotAgent`. The migration backfills existing sessions with it, and
 * readers use it for a row without a snapshot (written by a pre-0010 instance during a rolling
 * upgrade) until the turn setup stores one.
 */
export const LIVE_SESSION_CONFIG_SQL = `jsonb_build_object(
  'harness', jsonb_build_object('system_prompt', h.system_prompt, 'capabilities', coalesce(h.capabilities, '[]'::jsonb),
    'default_model_id', h.default_model_id, 'max_iterations', h.max_iterations),
  'agent', case when a.id is null then null else jsonb_build_object('system_prompt', a.system_prompt,
    'capabilities', coalesce(a.capabilities, '[]'::jsonb), 'client_tools', coalesce(a.client_tools, '[]'::jsonb),
    'default_model_id', a.default_model_id, 'max_iterations', a.max_iterations) end)`;

/** `from` clause that gives `LIVE_SESSION_CONFIG_SQL` its `h` and `a` for session `s`. */
export const SESSION_LAYERS_JOIN_SQL = `sessions s left join agents a on a.id = s.agent_id left join harnesses h on h.id = s.harness_id`;

/** The session's effective configuration as a SQL expression: its snapshot, else the live rows. */
export const EFFECTIVE_SESSION_CONFIG_SQL = `coalesce(s.config, ${LIVE_SESSION_CONFIG_SQL})`;

/** A jsonb value as returned by the driver (parsed, or text on some paths). */
export function parseSessionConfig(value: unknown): SessionConfig {
  const parsed = (typeof value === 'string' ? JSON.parse(value) : value) as SessionConfig | null;
  const config: SessionConfig = { harness: parsed?.harness ?? snapshotHarness({}), agent: parsed?.agent ?? null };
  if (parsed?.session) config.session = parsed.session;
  return config;
}
