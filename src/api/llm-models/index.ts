export { llmModelsRoutes } from './routes.js';
export { createLlmModelService } from './service.js';
export type { LlmModelService, LlmModelServiceDeps } from './service.js';
export { createModelSyncService } from './sync-service.js';
export type { ModelSyncService, ModelSyncDeps } from './sync-service.js';
export {
  createModelResolver,
  DEFAULT_PROVIDER_CACHE_TTL_MS,
  DEFAULT_MAX_CACHED_PROVIDERS,
  DEFAULT_ORG_DEFAULT_CACHE_TTL_MS,
} from './model-resolver.js';
export type { LlmModelResolver, ModelResolverDeps, ModelResolverOptions, ResolvedModel } from './model-resolver.js';
export { toLlmModelView } from './model-view.js';
export type { LlmModelRow } from './model-view.js';
export { createLlmModelsModule } from './llm-module.js';
export type { LlmModelsModule, LlmModelsModuleDeps } from './llm-module.js';
