import type { Route } from '../../http/route.js';
import type { Storage } from '../../session-storage/index.js';
import { storageRoutes } from './routes.js';

export function createStorageModule(deps: { storage: Storage }): { routes: Route[] } {
  return { routes: storageRoutes(deps) };
}
