import type { Route } from '../http/route.js';
import type { AppServices } from '../services.js';
import { authRoutes } from './auth/routes.js';
import { orgsRoutes } from './orgs/routes.js';
import { usersRoutes } from './users/routes.js';
import { agentsRoutes } from './agents/routes.js';
import { harnessesRoutes } from './harnesses/routes.js';
import { capabilitiesRoutes } from './capabilities/routes.js';
import { sessionRoutes } from './sessions/routes.js';
import { eventRoutes } from './events/routes.js';
import { llmProvidersRoutes } from './llm-providers/index.js';
import { llmModelsRoutes } from './llm-models/index.js';
import { fsRoutes } from './fs/routes.js';
import { storageRoutes } from './storage/routes.js';
import { imageRoutes } from './images/routes.js';
import { connectionRoutes } from './connections/routes.js';

/**
 * Every resource's routes. One line per resource module (src/api/<resource>/routes.ts); modules
 * that live elsewhere (the turn, src/turns/) hand theirs in, in the order the document lists them.
 */
export function createApiRoutes(services: AppServices, elsewhere: { turns: Route[] }): Route[] {
  return [
    ...authRoutes(services),
    ...usersRoutes(services),
    ...orgsRoutes(services),
    ...agentsRoutes(services),
    ...harnessesRoutes(services),
    ...capabilitiesRoutes(services),
    ...sessionRoutes(services),
    ...fsRoutes(services),
    ...storageRoutes(services),
    ...imageRoutes(services),
    ...connectionRoutes(services),
    ...llmProvidersRoutes(services),
    ...llmModelsRoutes(services),
    ...elsewhere.turns,
    ...eventRoutes({ ...services, limits: services.streamLimits }),
  ];
}
