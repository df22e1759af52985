import type { AuthModule } from '../../auth/index.js';
import type { Store } from '../../db/index.js';
import type { Route } from '../../http/route.js';
import { authRoutes } from './routes.js';

export interface AuthApiModuleDeps {
  store: Store;
  auth: AuthModule;
}

/**
 * Named apart from src/auth's `createAuthModule` (the authenticator these routes log in through),
 * which the composition root imports too.
 */
export function createAuthApiModule(deps: AuthApiModuleDeps): { routes: Route[] } {
  return { routes: authRoutes(deps) };
}
