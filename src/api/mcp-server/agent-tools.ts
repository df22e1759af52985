/**
 * The tools `/v1/mcp` offers: one per active agent of the caller's organisation, named
 * `agent__<name>` like the `sub_agents` capability's tools (within every vendor's tool-name
 * rules, so an MCP client may hand them to any LLM), described by the agent's description.
 */
import { mcpToolName } from '../../capabilities/index.js';
import type { Store } from '../../db/index.js';

/** Agents offered at most (the first by name); an organisation with more is told in the last tool's description. */
export const MAX_SERVED_AGENTS = 100;
const MAX_DESCRIPTION_CHARS = 1_000;

export interface ServedAgent {
  id: string;
  name: string;
  toolName: string;
  description: string;
}

const AGENTS_SQL = `select id, name, coalesce(description, '') as description from agents
  where organization_id = ? and status = 'active' order by name, id limit ${MAX_SERVED_AGENTS + 1}`;

export async function servedAgents(store: Store, orgId: string): Promise<{ agents: ServedAgent[]; more: boolean }> {
  const rows = await store.sql<{ id: string; name: string; description: string }>(AGENTS_SQL, [orgId]);
  const taken = new Set<string>();
  const agents = rows.slice(0, MAX_SERVED_AGENTS).map((row) => {
    // Two agents may share a name: the second one's tool name carries its id (hashed into the name rules).
    let toolName = mcpToolName('agent', row.name);
    if (taken.has(toolName)) toolName = mcpToolName('agent', `${row.name}-${row.id}`);
    taken.add(toolName);
    return { id: row.id, name: row.name, toolName, description: describe(row) };
  });
  return { agents, more: rows.length > MAX_SERVED_AGENTS };
}

function describe(row: { name: string; description: string }): string {
  const own = row.description.trim().slice(0, MAX_DESCRIPTION_CHARS);
  return `Runs one turn of the agent "${row.name}" and answers with its final reply.${own ? ` ${own}` : ''}`;
}
