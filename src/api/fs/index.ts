import type { Route } from '../../http/route.js';
import type { Storage } from '../../session-storage/index.js';
import { fsRoutes } from './routes.js';

export function createFsModule(deps: { storage: Storage }): { routes: Route[] } {
  return { routes: fsRoutes(deps) };
}
