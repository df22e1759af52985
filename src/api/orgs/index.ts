import type { AuthModule } from '../../auth/index.js';
import type { Store } from '../../db/index.js';
import type { Route } from '../../http/route.js';
import { orgsRoutes } from './routes.js';

export interface OrgsModuleDeps {
  store: Store;
  auth: AuthModule;
}

export function createOrgsModule(deps: OrgsModuleDeps): { routes: Route[] } {
  return { routes: orgsRoutes(deps) };
}
