import type { Route } from '../../http/index.js';
import type { Storage } from '../../session-storage/index.js';
import { connectionRoutes } from './routes.js';

export interface ConnectionsModuleDeps {
  /** The user's connections live with session storage (src/session-storage), which seals their keys. */
  connections: Storage['connections'];
}

export function createConnectionsModule(deps: ConnectionsModuleDeps): { routes: Route[] } {
  return { routes: connectionRoutes(deps) };
}
