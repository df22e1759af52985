import type { Config } from '../../config.js';
import type { Keyring } from '../../crypto/index.js';
import type { LlmProviderOptions, LlmProviderType } from '../../llm/index.js';
import type { Logger } from '../../log.js';
import { User, type Store } from '../../db/index.js';
import type { HostRule } from '../../capabilities/index.js';
import { createBaseUrlPolicy, createLlmProviderService, seedEnvProviders, upgradeLegacyProviderKeys } from '../llm-providers/index.js';
import { createModelResolver } from './model-resolver.js';
import { createLlmModelService } from './service.js';
import { createModelSyncService } from './sync-service.js';

export interface LlmModuleDeps {
  store: Store;
  keyring: Keyring;
  log: Logger;
  /** What runs when nothing names a model and the organisation has no default (docs/decisions.md). */
  systemDefault: 'llmsim' | null;
  /** Tests only: vendor URLs the sync service lists models from (see `ModelSyncDeps`). */
  syncBaseUrlOverride?: Partial<Record<LlmProviderType, string>>;
  llm?: Partial<LlmProviderOptions>;
  /** The operator's `LLM_PROVIDER_ALLOWED_PRIVATE_HOSTS` (default none). */
  allowPrivateHosts?: readonly HostRule[];
}

/**
 * Builds the providers, models, sync and resolver services with their links: a provider
 * change drops the resolver's cached client for it, a new organisation default its cached default.
 */
export function createLlmModule({ store, keyring, log, systemDefault, syncBaseUrlOverride, llm, allowPrivateHosts = [] }: LlmModuleDeps) {
  const modelResolver = createModelResolver({ store, keyring, log, systemDefault, llm });
  const assertBaseUrlAllowed = createBaseUrlPolicy({ allowPrivateHosts });
  const llmProviders = createLlmProviderService({
    store,
    keyring,
    log,
    assertBaseUrlAllowed,
    onChanged: (id) => modelResolver.invalidate(id),
  });
  const llmModels = createLlmModelService({
    store,
    providers: llmProviders,
    systemDefault,
    onDefaultChanged: (orgId) => modelResolver.invalidateDefault(orgId),
  });
  const modelSync = createModelSyncService({ store, providers: llmProviders, log, baseUrlOverride: syncBaseUrlOverride, llm });

  /** First start: providers for the vendor keys in the environment, in the bootstrap organisation. */
  async function seedFromEnv(config: Pick<Config, 'OPENAI_API_KEY' | 'ANTHROPIC_API_KEY' | 'GEMINI_API_KEY'>): Promise<string[]> {
    const operator = await store.em().findOne(User, { operator: true }, { orderBy: { created_at: 'asc' } });
    if (!operator) return [];
    return seedEnvProviders({ providers: llmProviders, config, log }, operator.organization_id);
  }

  /** At start: binds keys sealed before keys were bound to their destination (see `upgradeLegacyProviderKeys`). */
  const upgradeLegacyKeys = () => upgradeLegacyProviderKeys({ store, keyring, log });

  return { llmProviders, llmModels, modelSync, modelResolver, seedFromEnv, upgradeLegacyKeys };
}

export type LlmModule = ReturnType<typeof createLlmModule>;
