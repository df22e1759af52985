import { normalizeCapabilityRef, resolveCapabilities, validateCapabilityRefs, type CapabilityRegistry } from '../../capabilities/index.js';
import { NotFoundError } from '../../errors.js';
import { isAnyUuid } from '../../ids.js';
import { LLMSIM_MODEL_ID, LLMSIM_MODEL_UUID } from '../../llm/index.js';
import type { Principal } from '../../auth/index.js';
import { LRUCache } from 'lru-cache';
import { snapshotAgent, snapshotHarness, type SessionAdditions, type SessionConfig } from '../../db/index.js';
import { ForbiddenError } from '../../errors.js';
import type { ActiveAgent, AgentService, ModelLookup } from '../agents/index.js';
import { GENERIC_HARNESS_ID, PLATFORM_CHAT_HARNESS_ID, type HarnessService } from '../harnesses/index.js';
import type { SessionSetupInput, SessionSetupResolver } from './session-setup.js';
import { checkApprovalRules, checkCompactionSettings } from '../../turns/index.js';
import type { CompactionSettingsInput } from '../../../schemas/compaction.js';
import { DEFAULT_COMPACTION_THRESHOLD_PERCENT } from '../../../schemas/compaction.js';

export interface SessionSetupDeps {
  agents: AgentService;
  harnesses: HarnessService;
  capabilities: CapabilityRegistry;
  /** When absent, any model id is accepted (no model registry configured). */
  models?: ModelLookup;
  /** The operator's COMPACTION_THRESHOLD_PERCENT: a session's `compaction.threshold_percent` may not exceed it (default 80). */
  maxCompactionThresholdPercent?: number;
}

/**
 * Validates what a session refers to, snapshots the harness and agent configuration and computes
 * the features from that snapshot (spec 3.4): the harness (default `generic` when only an agent
 * is given) and the agent must exist and be active, session capabilities must be known (422), a
 * model must exist (404; a value that is not a model id at all is unknown too).
 */
/**
 * Active agents kept for guarded session creates. Their freshness does not rest on this window:
 * the insert is guarded by the row version, and a refused one reads the agent again. The
 * window and size only bound the memory.
 */
const AGENT_MEMORY = { ttl: 60_000, max: 2_000 };

export function createSessionSetupResolver({
  agents,
  harnesses,
  capabilities,
  models,
  maxCompactionThresholdPercent = DEFAULT_COMPACTION_THRESHOLD_PERCENT,
}: SessionSetupDeps): SessionSetupResolver {
  const checkCompaction = (principal: Principal, input: CompactionSettingsInput | null | undefined) =>
    checkCompactionSettings(input, {
      maxThresholdPercent: maxCompactionThresholdPercent,
      ...(models ? { modelExists: (id: string) => models.exists(principal.org_id, id) } : {}),
    });
  const known = new LRUCache<string, ActiveAgent>(AGENT_MEMORY);
  const reading = new Map<string, Promise<ActiveAgent>>();

  /** The agent from memory (guarded writes only) or the database; an organisation never changes, so 403 holds from memory too. */
  async function activeAgent(orgId: string, agentId: string, guarded: boolean): Promise<ActiveAgent> {
    const remembered = guarded ? known.get(agentId) : undefined;
    if (remembered) {
      if (remembered.organization_id !== orgId) throw new ForbiddenError();
      return { ...remembered, snapshot: snapshotAgent(remembered.snapshot) };
    }
    if (!guarded) {
      const active = await agents.getActive(orgId, agentId);
      known.set(agentId, active);
      return { ...active, snapshot: snapshotAgent(active.snapshot) };
    }
    // Creates that miss together share one read (at K=50 all of them miss when an entry expires);
    // only guarded ones, which the insert protects from a read that began before an edit.
    const key = `${orgId}:${agentId}`;
    let read = reading.get(key);
    if (!read) {
      const started: Promise<ActiveAgent> = agents.getActive(orgId, agentId).finally(() => {
        if (reading.get(key) === started) reading.delete(key);
      });
      read = started;
      reading.set(key, read);
    }
    const active = await read;
    known.set(agentId, active);
    return { ...active, snapshot: snapshotAgent(active.snapshot) };
  }

  /** The session's own client tools checked like an agent's (shape, unique names, no capability tool's name). */
  async function checkAdditions(
    principal: Principal,
    additions: SessionAdditions | undefined,
    serverToolNames: ReadonlySet<string>,
  ): Promise<SessionAdditions | undefined> {
    if (!additions) return undefined;
    const out: SessionAdditions = {};
    if (additions.client_tools?.length)
      out.client_tools = await agents.checkClientTools(principal, additions.client_tools, serverToolNames);
    if (additions.parallel_tool_calls !== undefined) out.parallel_tool_calls = additions.parallel_tool_calls;
    if (additions.tool_approvals?.length) out.tool_approvals = checkApprovalRules(additions.tool_approvals);
    const compaction = additions.compaction ? await checkCompaction(principal, additions.compaction) : null;
    if (compaction) out.compaction = compaction;
    if (additions.locale !== undefined) out.locale = additions.locale;
    return Object.keys(out).length ? out : undefined;
  }

  return {
    chatHarnessId: PLATFORM_CHAT_HARNESS_ID,
    checkCompaction,
    async resolve(principal: Principal, input: SessionSetupInput) {
      const harnessId = input.harness_id ?? GENERIC_HARNESS_ID;
      const harness = input.harness_snapshot ?? snapshotHarness(await harnesses.getActiveHarness(principal.org_id, harnessId));
      const guarded = input.guarded === true;
      const active = input.agent_id ? await activeAgent(principal.org_id, input.agent_id, guarded) : null;
      const agent = active?.snapshot ?? null;
      const items = input.capabilities ?? [];
      validateCapabilityRefs(items, capabilities);
      // `llmsim` names the built-in model by its UUID (a session's model_id is one); `exists` says whether it is enabled.
      const named = input.model_id?.toLowerCase();
      const model_id = named == null ? null : named === LLMSIM_MODEL_ID ? LLMSIM_MODEL_UUID : named;
      if (model_id !== null && (!isAnyUuid(model_id) || (models && !(await models.exists(principal.org_id, model_id)))))
        throw new NotFoundError();
      const resolved = resolveCapabilities(
        { harness: harness.capabilities, agent: agent?.capabilities ?? [], session: items },
        capabilities,
      );
      const session = await checkAdditions(principal, input.additions, new Set(resolved.tools.map((t) => t.name)));
      const config: SessionConfig = session ? { harness, agent, session } : { harness, agent };
      return {
        harness_id: harnessId.toLowerCase(),
        agent_id: active?.id ?? null,
        capabilities: items.map(normalizeCapabilityRef),
        features: resolved.features,
        model_id,
        config,
        ...(guarded && active ? { agent_version: active.version } : {}),
      };
    },
    forgetAgent(agentId: string) {
      known.delete(agentId);
      for (const key of reading.keys()) if (key.endsWith(`:${agentId}`)) reading.delete(key);
    },
  };
}
