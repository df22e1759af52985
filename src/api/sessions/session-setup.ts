import type { Principal } from '../../auth/index.js';
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
}

/**
 * What sessions need from agents, harnesses, capabilities and models, as one port so the session
 * service does not depend on their modules: validate the references and compute `features`.
 * 400/404/403/422 are thrown as the spec asks (unknown model → 404).
 */
export interface SessionSetupResolver {
  resolve(principal: Principal, input: SessionSetupInput): Promise<SessionSetup>;
  /** The platform chat harness used by the global chat session. */
  chatHarnessId: string;
}
