/**
 * What a turn runs with, read fresh at the start of every attempt (spec 3.4: after an agent
 * switch the next turn uses the new agent's prompt, capabilities and default model): the
 * session, its agent and harness in one query, the resolved capabilities, the system prompt,
 * the tools offered to the LLM, and the iteration limit.
 */
import {
  buildSystemPrompt,
  resolveCapabilities,
  type CapabilityLookup,
  type CapabilityRef,
  type ResolvedTool,
} from '../src/capabilities/index.js';
import type { LlmToolDefinition } from '../src/llm/index.js';
import type { Store } from '../src/store/index.js';

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
  llmTools: LlmToolDefinition[];
  maxIterations: number;
  /** First model id among session > agent default > harness default (message controls come first, per turn). */
  modelIds: { session: string | null; agent: string | null; harness: string | null };
}

interface SetupRow {
  id: string;
  organization_id: string;
  user_id: string;
  model_id: string | null;
  session_capabilities: CapabilityRef[];
  agent_id: string | null;
  agent_prompt: string | null;
  agent_capabilities: CapabilityRef[] | null;
  agent_client_tools: ClientToolDef[] | null;
  agent_model_id: string | null;
  agent_max_iterations: number | null;
  harness_prompt: string | null;
  harness_capabilities: CapabilityRef[] | null;
  harness_model_id: string | null;
  harness_max_iterations: number | null;
}

const SETUP_QUERY = `
  select s.id, s.organization_id, s.user_id, s.model_id, s.capabilities as session_capabilities, s.agent_id,
    a.system_prompt as agent_prompt, a.capabilities as agent_capabilities, a.client_tools as agent_client_tools,
    a.default_model_id as agent_model_id, a.max_iterations as agent_max_iterations,
    h.system_prompt as harness_prompt, h.capabilities as harness_capabilities,
    h.default_model_id as harness_model_id, h.max_iterations as harness_max_iterations
  from sessions s
  left join agents a on a.id = s.agent_id
  left join harnesses h on h.id = s.harness_id
  where s.id = ?`;

export interface TurnSetupOptions {
  store: Store;
  capabilities: CapabilityLookup;
  /** Iterations per turn when neither agent nor harness sets one (config MAX_ITERATIONS, default 100). */
  defaultMaxIterations: number;
}

/** Loads a session's turn setup; null when the session no longer exists. */
export async function loadTurnSetup({ store, capabilities, defaultMaxIterations }: TurnSetupOptions, sessionId: string): Promise<TurnSetup | null> {
  const row = (await store.sql<SetupRow>(SETUP_QUERY, [sessionId]))[0];
  if (!row) return null;
  const resolved = resolveCapabilities(
    { harness: row.harness_capabilities ?? [], agent: row.agent_capabilities ?? [], session: row.session_capabilities ?? [] },
    capabilities,
  );
  const base = [row.harness_prompt, row.agent_prompt].filter((p): p is string => !!p && p.trim() !== '').join('\n\n');
  const serverTools = new Map(resolved.tools.map((t) => [t.name, t]));
  // A client tool never shadows a server tool of the same name (the agents module refuses that on write).
  const clientTools = (row.agent_client_tools ?? []).filter((t) => !serverTools.has(t.name));
  return {
    sessionId: row.id,
    orgId: row.organization_id,
    ownerUserId: row.user_id,
    system: buildSystemPrompt(base, resolved),
    serverTools,
    clientToolNames: new Set(clientTools.map((t) => t.name)),
    llmTools: [
      ...resolved.tools.map((t) => ({ name: t.name, description: t.description, parameters: { ...t.parameters } })),
      ...clientTools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters ?? { type: 'object', properties: {} } })),
    ],
    maxIterations: row.agent_max_iterations ?? row.harness_max_iterations ?? defaultMaxIterations,
    modelIds: { session: row.model_id, agent: row.agent_model_id, harness: row.harness_model_id },
  };
}
