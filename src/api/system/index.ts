import type { Route } from '../../http/index.js';
import { systemRoutes, type HealthCheck } from './routes.js';

export type { HealthCheck } from './routes.js';

export interface SystemModuleDeps {
  checks: HealthCheck[];
  /** Read per request: the document is built from every module's routes, this one's included. */
  openApi: () => Record<string, unknown>;
}

export function createSystemModule(deps: SystemModuleDeps): { routes: Route[] } {
  return { routes: systemRoutes(deps) };
}
