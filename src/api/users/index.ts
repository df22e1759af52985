import type { Route } from '../../http/route.js';
import { usersRoutes } from './routes.js';
import { createUserService, type UserService, type UserServiceDeps } from './service.js';

export interface UsersModule {
  service: UserService;
  routes: Route[];
}

export function createUsersModule(deps: UserServiceDeps): UsersModule {
  const service = createUserService(deps);
  return { service, routes: usersRoutes({ users: service }) };
}
