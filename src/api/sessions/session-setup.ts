import type { Principal } from '../../http/route.js';

export interface CapabilityItem {
  ref: string;
  config?: Record<string, unknown>;
}

export interface SessionSetupInput {
  harness_id?: string;
  agent_id?: string | null;
  capabilities?: (string | CapabilityItem)[];
  model_id?: string | null;
}

export interface SessionSetup {
  harness_id: string;
  agent_id: string | null;
  /** Session-level capability additions, normalised to `{ref, config}`. */
  capabilities: CapabilityItem[];
  /** Computed from harness, agent and session capabilities with dependencies (spec 2.3). */
  features: string[];
  model_id: string | null;
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
