import type { Route } from '../../http/index.js';
import { usersRoutes } from './routes.js';
import { createUserService, type UserService, type UserServiceDeps } from './service.js';

export { flushUnique } from './service.js';
export { normalizeEmail, userView, type UserRow } from './user-view.js';

export interface UsersModule {
  service: UserService;
  routes: Route[];
}

export function createUsersModule(deps: UserServiceDeps): UsersModule {
  const service = createUserService(deps);
  return { service, routes: usersRoutes({ users: service }) };
}
