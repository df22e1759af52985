import { normalizeCapabilityRef, resolveCapabilities, validateCapabilityRefs, type CapabilityRegistry } from '../../capabilities/index.js';
import { NotFoundError } from '../../errors.js';
import type { Principal } from '../../http/route.js';
import { orgScope, type Store } from '../../store/index.js';
import type { AgentService, ModelLookup } from '../agents/index.js';
import { GENERIC_HARNESS_ID, PLATFORM_CHAT_HARNESS_ID, type HarnessService } from '../harnesses/index.js';
import type { SessionSetupInput, SessionSetupResolver } from './session-setup.js';

export interface SessionSetupDeps {
  store: Store;
  agents: AgentService;
  harnesses: HarnessService;
  capabilities: CapabilityRegistry;
  /** When absent, any model id is accepted (no model registry configured). */
  models?: ModelLookup;
}

/**
 * Validates what a session refers to and computes its features (spec 3.4): the harness (default
 * `generic` when only an agent is given) and the agent must exist and be active, session
 * capabilities must be known (422), a model must exist (404).
 */
export function createSessionSetupResolver({ store, agents, harnesses, capabilities, models }: SessionSetupDeps): SessionSetupResolver {
  return {
    chatHarnessId: PLATFORM_CHAT_HARNESS_ID,
    async resolve(principal: Principal, input: SessionSetupInput) {
      const harness = await harnesses.getActiveHarness(principal.org_id, input.harness_id ?? GENERIC_HARNESS_ID);
      const agent = input.agent_id ? await agents.getActive(orgScope(store.em(), principal.org_id), input.agent_id) : null;
      const items = input.capabilities ?? [];
      validateCapabilityRefs(items, capabilities);
      const model_id = input.model_id?.toLowerCase() ?? null;
      if (model_id && models && !(await models.exists(principal.org_id, model_id))) throw new NotFoundError();
      const resolved = resolveCapabilities({ harness: harness.capabilities, agent: agent?.capabilities ?? [], session: items }, capabilities);
      return {
        harness_id: harness.id,
        agent_id: agent?.id ?? null,
        capabilities: items.map(normalizeCapabilityRef),
        features: resolved.features,
        model_id,
      };
    },
  };
}
