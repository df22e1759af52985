import type { AuthModule } from '../../auth/index.js';
import type { Store } from '../../db/index.js';
import type { Route } from '../../http/index.js';
import { createApiKeyService, type ApiKeyService } from './api-key-service.js';
import { authRoutes } from './routes.js';
import { createAuthService, type AuthService } from './service.js';

export interface AuthApiModuleDeps {
  store: Store;
  /** The authenticator (src/auth): tokens, password checks, the principal cache keys invalidate. */
  auth: AuthModule;
}

export interface AuthApiModule {
  /** Login, refresh, logout, the caller's identity, stream tokens. */
  service: AuthService;
  apiKeys: ApiKeyService;
  routes: Route[];
}

/**
 * Named apart from src/auth's `createAuthModule` (the authenticator these routes log in through),
 * which the composition root imports too.
 */
export function createAuthApiModule({ store, auth }: AuthApiModuleDeps): AuthApiModule {
  const service = createAuthService({ store, auth });
  const apiKeys = createApiKeyService({ store, principals: auth.principals });
  return { service, apiKeys, routes: authRoutes({ auth: service, apiKeys }) };
}
