/**
 * The `sub_agents` capability (docs/decisions/0102-sub-agents.md): each agent the config allows is
 * offered to the LLM as the tool `agent__<name>` taking a `message`; a call runs one turn of that
 * agent in a child session and answers with the child's final text. The tools are listed when a
 * turn starts (one query), so a renamed or archived agent is seen at the next turn.
 */
import { Type } from '@sinclair/typebox';
import { SubAgentsCapabilityConfig } from '../../../schemas/capabilities.js';
import { defineCapability, defineTool, textResult } from '../define.js';
import { mcpToolName } from '../mcp/tool-names.js';
import {
  ToolError,
  type Capability,
  type CapabilityConfig,
  type DynamicToolsContext,
  type ToolDefinition,
  type ToolResult,
} from '../types.js';
import type { SubAgentInfo, SubAgentPort } from './port.js';

export const SUB_AGENTS_CAPABILITY_ID = 'sub_agents';

/** The longest message a parent may send a child (the API's own message cap is far above). */
const MAX_MESSAGE_CHARS = 100_000;
const MAX_DESCRIPTION_CHARS = 1_000;

/** One schema object for every sub-agent tool: ajv compiles it once. */
const SubAgentArgs = Type.Object(
  {
    message: Type.String({
      minLength: 1,
      maxLength: MAX_MESSAGE_CHARS,
      description: 'What to ask the agent: the whole task, it sees nothing else.',
    }),
  },
  { additionalProperties: false },
);

export interface SubAgentsCapabilityOptions {
  /** The longest a call waits for its child's turn, in ms (SUBAGENT_TIMEOUT_MS; a config may only shorten it). */
  timeoutMs: number;
}

export const DEFAULT_SUB_AGENTS_OPTIONS: SubAgentsCapabilityOptions = { timeoutMs: 600_000 };

export interface SubAgentsCapability {
  capability: Capability;
  /** Connects the capability to sessions and turns (src/app/turns.ts); until then its tools fail politely. */
  bind(port: SubAgentPort): void;
}

export function createSubAgentsCapability(options: Partial<SubAgentsCapabilityOptions> = {}): SubAgentsCapability {
  const opts = { ...DEFAULT_SUB_AGENTS_OPTIONS, ...options };
  let port: SubAgentPort | null = null;
  const base = defineCapability({
    id: SUB_AGENTS_CAPABILITY_ID,
    name: 'Sub-agents',
    description:
      'Other agents of the organisation, offered as tools (agent__<name>): a call runs one turn of that agent in a child session.',
    prompt: '',
    tools: [],
    configSchema: Type.Object(SubAgentsCapabilityConfig.properties, { additionalProperties: false }),
  });
  const capability: Capability = {
    ...base,
    async dynamicTools(config: CapabilityConfig, ctx: DynamicToolsContext) {
      const refs = (config['agents'] as string[] | undefined) ?? [];
      if (refs.length === 0) return { tools: [], prompt: '' };
      if (!port) return { tools: [], prompt: `## ${base.name}\n- Sub-agents are not available on this instance.` };
      // Never throws (a turn must start): a failed lookup is a note and no tools.
      const found = await port.agents(ctx.org_id, refs).catch(() => null);
      if (!found) return { tools: [], prompt: `## ${base.name}\n- The agents could not be looked up: none is offered in this turn.` };
      const timeoutMs = Math.min(opts.timeoutMs, (config['timeout_ms'] as number | undefined) ?? opts.timeoutMs);
      const tools = found.map((agent) => subAgentTool(agent, timeoutMs, () => port));
      const missing = refs.length - found.length;
      const note =
        missing > 0 ? `## ${base.name}\n- ${missing} of the configured agents were not found (or are archived): not offered.` : '';
      return { tools, prompt: note };
    },
  };
  return {
    capability,
    bind(p) {
      port = p;
    },
  };
}

function subAgentTool(agent: SubAgentInfo, timeoutMs: number, port: () => SubAgentPort | null): ToolDefinition {
  const tool = defineTool({
    name: mcpToolName('agent', agent.name),
    display_name: `Ask ${agent.name}`.slice(0, 200),
    description: `Hand a task to the agent "${agent.name}" and get its answer. ${agent.description}`.trim().slice(0, MAX_DESCRIPTION_CHARS),
    parameters: SubAgentArgs,
    async run(args, ctx): Promise<ToolResult> {
      const p = port();
      if (!p || !ctx.call) throw new ToolError('Sub-agents run only inside a turn of this service');
      const outcome = await p.run({
        org_id: ctx.org_id,
        parent_session_id: ctx.session_id,
        parent_turn_id: ctx.call.turn_id,
        parent_tool_call_id: ctx.call.id,
        agent,
        message: args.message,
        signal: ctx.signal,
        ...(ctx.reportSubagent ? { report: ctx.reportSubagent } : {}),
      });
      const nested = { child_session_id: outcome.child_session_id, usage: outcome.usage };
      if (outcome.status !== 'completed') throw new ToolError(`Sub-agent "${agent.name}": ${outcome.error}`, { nested });
      return { ...textResult(outcome.text || '(the agent answered with no text)'), nested };
    },
  });
  return { ...tool, timeoutMs };
}
