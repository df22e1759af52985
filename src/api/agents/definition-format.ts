import { stringify as stringifyYaml } from 'yaml';
import type { AgentView } from '../../../schemas/agents.js';

/**
 * Markdown with YAML front matter that `parseDefinition` reads back to an equal agent: the
 * front matter holds every set field but the prompt; the prompt follows a blank line verbatim.
 */
export function exportMarkdown(agent: AgentView): string {
  const front: Record<string, unknown> = { name: agent.name };
  if (agent.description !== null) front['description'] = agent.description;
  if (agent.tags.length) front['tags'] = agent.tags;
  if (agent.capabilities.length) front['capabilities'] = agent.capabilities;
  if (agent.default_model_id !== null) front['default_model_id'] = agent.default_model_id;
  if (agent.client_tools.length) front['client_tools'] = agent.client_tools;
  if (agent.max_iterations !== null) front['max_iterations'] = agent.max_iterations;
  if (agent.display_name !== null) front['display_name'] = agent.display_name;
  // A model named by name (not just its id) imports back to the same reference.
  if (agent.model !== null && agent.model !== agent.default_model_id) front['model'] = agent.model;
  if (agent.parallel_tool_calls !== null) front['parallel_tool_calls'] = agent.parallel_tool_calls;
  if (agent.tool_approvals.length) front['tool_approvals'] = agent.tool_approvals;
  if (agent.compaction !== null) front['compaction'] = agent.compaction;
  return `---\n${stringifyYaml(front, { lineWidth: 0 })}---\n\n${agent.system_prompt}`;
}

/** A file name for the export's Content-Disposition, from the agent name. */
export function exportFileName(name: string): string {
  const slug = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 64);
  return `${slug || 'agent'}.md`;
}
