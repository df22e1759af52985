import type { CapabilityRegistry } from '../../capabilities/index.js';
import type { Route } from '../../http/index.js';
import { capabilitiesRoutes } from './routes.js';

export { capabilitiesRoutes } from './routes.js';

/** The catalogue is read-only: the registry (src/capabilities) is the service. */
export function createCapabilitiesModule(deps: { capabilities: CapabilityRegistry }): { routes: Route[] } {
  return { routes: capabilitiesRoutes(deps) };
}
