import type { Config } from '../../config.js';
import type { Keyring } from '../../crypto/index.js';
import type { LlmProviderOptions, LlmProviderType } from '../../llm/index.js';
import type { Logger } from '../../log.js';
import { User, type Store } from '../../db/index.js';
import type { HostRule } from '../../capabilities/index.js';
import { createBaseUrlPolicy, createLlmProvidersModule, seedEnvProviders, upgradeLegacyProviderKeys } from '../llm-providers/index.js';
import { llmModelsRoutes } from './routes.js';
import { createModelResolver } from './model-resolver.js';
import { createLlmModelService } from './service.js';
import { createModelSyncService } from './sync-service.js';

export interface LlmModelsModuleDeps {
  store: Store;
  keyring: Keyring;
  log: Logger;
  /** What runs when nothing names a model and the organisation has no default (docs/decisions/0023-model-resolution-and-defaults.md). */
  systemDefault: 'llmsim' | null;
  /** Tests only: vendor URLs the sync service lists models from (see `ModelSyncDeps`). */
  syncBaseUrlOverride?: Partial<Record<LlmProviderType, string>>;
  llm?: Partial<LlmProviderOptions>;
  /** The operator's `LLM_PROVIDER_ALLOWED_PRIVATE_HOSTS` (default none). */
  allowPrivateHosts?: readonly HostRule[];
}

/**
 * The models resource, and the providers resource with it (issue 18 item 4): their services are
 * linked, so they are built together. A provider change drops the resolver's cached client for it,
 * a new organisation default its cached default.
 */
export function createLlmModelsModule({
  store,
  keyring,
  log,
  systemDefault,
  syncBaseUrlOverride,
  llm,
  allowPrivateHosts = [],
}: LlmModelsModuleDeps) {
  const modelResolver = createModelResolver({ store, keyring, log, systemDefault, llm });
  const assertBaseUrlAllowed = createBaseUrlPolicy({ allowPrivateHosts });
  const providers = createLlmProvidersModule({
    store,
    keyring,
    log,
    assertBaseUrlAllowed,
    llmsimEnabled: systemDefault === 'llmsim',
    onChanged: (id) => modelResolver.invalidate(id),
  });
  const llmProviders = providers.service;
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

  return {
    service: llmModels,
    routes: llmModelsRoutes({ llmModels, modelSync }),
    /** The providers resource (its routes come before the models' in the document). */
    providers,
    modelSync,
    modelResolver,
    seedFromEnv,
    upgradeLegacyKeys,
  };
}

export type LlmModelsModule = ReturnType<typeof createLlmModelsModule>;
