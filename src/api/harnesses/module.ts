import type { Route } from '../../http/index.js';
import { harnessesRoutes } from './routes.js';
import { createHarnessService, type HarnessService, type HarnessServiceDeps } from './service.js';

export interface HarnessesModule {
  /** Sessions resolve their harness through it; `ensureBuiltIns()` once at start. */
  service: HarnessService;
  routes: Route[];
}

export function createHarnessesModule(deps: HarnessServiceDeps): HarnessesModule {
  const service = createHarnessService(deps);
  return { service, routes: harnessesRoutes({ harnesses: service }) };
}
