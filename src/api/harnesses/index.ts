export { harnessesRoutes } from './routes.js';
export { createHarnessService } from './service.js';
export type { HarnessService, HarnessServiceDeps } from './service.js';
export { BUILT_IN_HARNESSES, GENERIC_HARNESS_ID, PLATFORM_CHAT_HARNESS_ID } from './built-in.js';
export { createHarnessesModule } from './module.js';
export type { HarnessesModule } from './module.js';
