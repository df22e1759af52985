import type { Route } from '../../http/route.js';
import type { Storage } from '../../session-storage/index.js';
import { imageRoutes } from './routes.js';

export function createImagesModule(deps: { storage: Storage }): { routes: Route[] } {
  return { routes: imageRoutes(deps) };
}
