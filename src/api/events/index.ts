import type { Route } from '../../http/index.js';
import { eventRoutes, type EventRouteDeps } from './routes.js';

export type { EventRouteDeps as EventsModuleDeps } from './routes.js';

export function createEventsModule(deps: EventRouteDeps): { routes: Route[] } {
  return { routes: eventRoutes(deps) };
}
