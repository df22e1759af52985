import { normalizeCapabilityRef, resolveCapabilities, validateCapabilityRefs, type CapabilityRegistry } from '../../capabilities/index.js';
import { NotFoundError } from '../../errors.js';
import { isAnyUuid } from '../../ids.js';
import type { Principal } from '../../http/route.js';
import { orgScope, snapshotAgent, snapshotHarness, type Store } from '../../store/index.js';
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
 * Validates what a session refers to, snapshots the harness and agent configuration and computes
 * the features from that snapshot (spec 3.4): the harness (default `generic` when only an agent
 * is given) and the agent must exist and be active, session capabilities must be known (422), a
 * model must exist (404; a value that is not a model id at all is unknown too).
 */
export function createSessionSetupResolver({ store, agents, harnesses, capabilities, models }: SessionSetupDeps): SessionSetupResolver {
  return {
    chatHarnessId: PLATFORM_CHAT_HARNESS_ID,
    async resolve(principal: Principal, input: SessionSetupInput) {
      const harnessId = input.harness_id ?? GENERIC_HARNESS_ID;
      const harness = input.harness_snapshot ?? snapshotHarness(await harnesses.getActiveHarness(principal.org_id, harnessId));
      const agentRow = input.agent_id ? await agents.getActive(orgScope(store.em(), principal.org_id), input.agent_id) : null;
      const agent = agentRow ? snapshotAgent(agentRow) : null;
      const items = input.capabilities ?? [];
      validateCapabilityRefs(items, capabilities);
      const model_id = input.model_id == null ? null : input.model_id.toLowerCase();
      if (model_id !== null && (!isAnyUuid(model_id) || (models && !(await models.exists(principal.org_id, model_id))))) throw new NotFoundError();
      const resolved = resolveCapabilities({ harness: harness.capabilities, agent: agent?.capabilities ?? [], session: items }, capabilities);
      return {
        harness_id: harnessId.toLowerCase(),
        agent_id: agentRow?.id ?? null,
        capabilities: items.map(normalizeCapabilityRef),
        features: resolved.features,
        model_id,
        config: { harness, agent },
      };
    },
  };
}
