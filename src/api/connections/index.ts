import type { Route } from '../../http/route.js';
import type { Storage } from '../../session-storage/index.js';
import { connectionRoutes } from './routes.js';

export function createConnectionsModule(deps: { storage: Storage }): { routes: Route[] } {
  return { routes: connectionRoutes(deps) };
}
