import type { LlmProviderTypeValue } from '../../../schemas/llm.js';
import type { Config } from '../../config.js';
import type { Logger } from '../../log.js';
import type { LlmProviderService } from './service.js';

type EnvKeyName = 'OPENAI_API_KEY' | 'ANTHROPIC_API_KEY' | 'GEMINI_API_KEY';

/** Which environment key creates which provider at first start. */
export const ENV_PROVIDERS: readonly { env: EnvKeyName; name: string; provider_type: LlmProviderTypeValue }[] = [
  { env: 'OPENAI_API_KEY', name: 'OpenAI', provider_type: 'openai' },
  { env: 'ANTHROPIC_API_KEY', name: 'Anthropic', provider_type: 'anthropic' },
  { env: 'GEMINI_API_KEY', name: 'Gemini', provider_type: 'gemini' },
];

export interface EnvProviderSeedDeps {
  providers: Pick<LlmProviderService, 'create'>;
  config: Pick<Config, EnvKeyName>;
  log: Logger;
}

/**
 * First start only (the caller decides: the bootstrap organisation was just created): one
 * provider per vendor key set in the environment, in the bootstrap organisation. Models are
 * not fetched here; `POST /v1/llm-providers/{id}/sync-models` does that.
 */
export async function seedEnvProviders({ providers, config, log }: EnvProviderSeedDeps, orgId: string): Promise<string[]> {
  const created: string[] = [];
  for (const { env, name, provider_type } of ENV_PROVIDERS) {
    const apiKey = config[env];
    if (!apiKey) continue;
    const provider = await providers.create(orgId, { name, provider_type, api_key: apiKey }, { source: 'operator' });
    created.push(provider.id);
    log.info({ providerId: provider.id, provider_type, from: env }, 'llm provider created from the environment');
  }
  return created;
}
