import type { AgentView } from '../../../schemas/agents.js';
import { GENERIC_HARNESS_ID } from '../../../schemas/harnesses.js';
import type { AgentRow } from './types.js';

/** The stored, checked fields of a row, as they are (what the service's field check returned for it). */
export function storedAgentFields(row: AgentRow) {
  return {
    name: row.name,
    description: row.description ?? null,
    system_prompt: row.system_prompt,
    default_model_id: row.default_model_id ?? null,
    tags: row.tags ?? [],
    capabilities: row.capabilities ?? [],
    client_tools: (row.client_tools ?? []).map((t) => ({
      type: 'client' as const,
      name: t.name,
      description: t.description,
      parameters: t.parameters,
    })),
    max_iterations: row.max_iterations ?? null,
    display_name: row.display_name ?? null,
    model: row.model ?? null,
    parallel_tool_calls: row.parallel_tool_calls ?? null,
    tool_approvals: row.tool_approvals ?? [],
    compaction: row.compaction ?? null,
  };
}

/** The API shape of an agent row (spec 2.1). */
export function toAgentView(row: AgentRow): AgentView {
  return {
    id: row.id,
    ...storedAgentFields(row),
    // The default model as the client named it (earlier API `model`), else its id.
    model: row.model ?? row.default_model_id ?? null,
    // Agents carry no harness of their own: a session from an agent alone runs on the generic one.
    harness_id: GENERIC_HARNESS_ID,
    status: row.status,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
