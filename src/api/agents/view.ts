import type { AgentView } from '../../../schemas/agents.js';
import type { AgentRow } from './types.js';

/** The API shape of an agent row (spec 2.1). */
export function toAgentView(row: AgentRow): AgentView {
  return {
    id: row.id,
    name: row.name,
    description: row.description ?? null,
    system_prompt: row.system_prompt,
    default_model_id: row.default_model_id ?? null,
    tags: row.tags ?? [],
    capabilities: row.capabilities ?? [],
    client_tools: (row.client_tools ?? []).map((t) => ({ type: 'client' as const, name: t.name, description: t.description, parameters: t.parameters })),
    max_iterations: row.max_iterations ?? null,
    display_name: row.display_name ?? null,
    // The default model as the client named it (earlier API `model`), else its id.
    model: row.model ?? row.default_model_id ?? null,
    parallel_tool_calls: row.parallel_tool_calls ?? null,
    status: row.status,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
