import type { Route } from '../../http/index.js';
import { llmProvidersRoutes } from './routes.js';
import { createLlmProviderService, type LlmProviderService, type LlmProviderServiceDeps } from './service.js';

export interface LlmProvidersModule {
  /** Models and model sync read providers through it (src/api/llm-models/llm-module.ts). */
  service: LlmProviderService;
  routes: Route[];
}

export function createLlmProvidersModule(deps: LlmProviderServiceDeps): LlmProvidersModule {
  const service = createLlmProviderService(deps);
  return { service, routes: llmProvidersRoutes({ llmProviders: service }) };
}
