import type { AuthModule } from '../../auth/index.js';
import type { Store } from '../../db/index.js';
import type { Route } from '../../http/route.js';
import { usersRoutes } from './routes.js';

export interface UsersModuleDeps {
  store: Store;
  auth: AuthModule;
}

export function createUsersModule(deps: UsersModuleDeps): { routes: Route[] } {
  return { routes: usersRoutes(deps) };
}
