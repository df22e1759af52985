import type { Principal } from '../../auth/index.js';
import type { CompactionSettingsInput } from '../../../schemas/compaction.js';
import type { HarnessSnapshot, SessionAdditions, SessionConfig } from '../../db/index.js';

export interface CapabilityItem {
  ref: string;
  config?: Record<string, unknown>;
}

export interface SessionSetupInput {
  harness_id?: string;
  agent_id?: string | null;
  capabilities?: (string | CapabilityItem)[];
  model_id?: string | null;
  /**
   * The harness part of the session's snapshot, on an agent switch: the harness is fixed for the
   * session's life (spec 2.3), so the switch keeps what the session was created with.
   */
  harness_snapshot?: HarnessSnapshot;
  /**
   * What the session adds to its agent (earlier public API: its own client tools,
   * `parallel_tool_calls`, `locale`); an agent switch passes the session's copy on.
   */
  additions?: SessionAdditions;
  /**
   * The caller stores the snapshot with a write guarded by `agent_version` (session create): the
   * agent may then come from the resolver's memory, as the guard refuses a snapshot of a changed agent.
   */
  guarded?: boolean;
}

export interface SessionSetup {
  harness_id: string;
  agent_id: string | null;
  /** Session-level capability additions, normalised to `{ref, config}`. */
  capabilities: CapabilityItem[];
  /** Computed from harness, agent and session capabilities with dependencies (spec 2.3). */
  features: string[];
  model_id: string | null;
  /** The harness and agent configuration the session will run with (spec 3.4 rules 2 and 3). */
  config: SessionConfig;
  /** With `guarded`: the version of the agent row the snapshot was taken from (`ActiveAgent.version`). */
  agent_version?: string;
}

/**
 * What sessions need from agents, harnesses, capabilities and models, as one port so the session
 * service does not depend on their modules: validate the references and compute `features`.
 * 400/404/403/422 are thrown as the spec asks (unknown model → 404).
 */
export interface SessionSetupResolver {
  resolve(principal: Principal, input: SessionSetupInput): Promise<SessionSetup>;
  /** A guarded write was refused (the agent changed): the next `resolve` reads the agent again. */
  forgetAgent(agentId: string): void;
  /** The platform chat harness used by the global chat session. */
  chatHarnessId: string;
  /** A session's compaction settings as stored (null: none); 422 past the server's threshold, 404 for a model not of the organisation. */
  checkCompaction(principal: Principal, input: CompactionSettingsInput | null | undefined): Promise<CompactionSettingsInput | null>;
}
