/**
 * Run-time tools (MCP servers): a resolution lists its static tools; capabilities with
 * `dynamicTools` add theirs when a turn starts. A dynamic tool never shadows a tool listed
 * before it (built-ins first, then earlier capabilities), so a server cannot take over
 * `fetch_url`; its instructions for the turn are appended to the prompt.
 */
import type { CapabilityLookup } from './resolve.js';
import type { DynamicToolsContext, ResolvedCapabilities, ResolvedTool } from './types.js';

/** `resolved` plus the dynamic tools of its capabilities; `context` is read only when one has any. */
export async function withDynamicTools(
  resolved: ResolvedCapabilities,
  registry: CapabilityLookup,
  context: () => DynamicToolsContext | Promise<DynamicToolsContext>,
): Promise<ResolvedCapabilities> {
  const dynamic = resolved.capabilities.filter((c) => registry.get(c.ref)?.dynamicTools);
  if (dynamic.length === 0) return resolved;
  const ctx = await context();
  const lists = await Promise.all(dynamic.map(async (c) => ({ ...c, out: await registry.get(c.ref)!.dynamicTools!(c.config, ctx) })));
  const tools: ResolvedTool[] = [...resolved.tools];
  const taken = new Set(tools.map((t) => t.name));
  const prompts = [resolved.prompt];
  for (const { ref, config, out } of lists) {
    for (const tool of out.tools) {
      if (taken.has(tool.name)) continue;
      taken.add(tool.name);
      tools.push({ ...tool, capability_id: ref, config });
    }
    prompts.push(out.prompt.trim());
  }
  return { ...resolved, tools, prompt: prompts.filter((p) => p !== '').join('\n\n') };
}
