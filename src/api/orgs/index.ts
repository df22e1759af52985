import type { Route } from '../../http/index.js';
import { orgsRoutes } from './routes.js';
import { createOrgService, type OrgService } from './service.js';

export { orgView } from './service.js';

export interface OrgsModule {
  service: OrgService;
  routes: Route[];
}

export function createOrgsModule(deps: Parameters<typeof createOrgService>[0]): OrgsModule {
  const service = createOrgService(deps);
  return { service, routes: orgsRoutes({ orgs: service }) };
}
