import type { Route } from '../../http/index.js';
import { agentsRoutes } from './routes.js';
import { createAgentService, type AgentService, type AgentServiceDeps } from './service.js';

export interface AgentsModule {
  /** Sessions resolve their agent through it (src/api/sessions/setup-resolver.ts). */
  service: AgentService;
  routes: Route[];
}

export function createAgentsModule(deps: AgentServiceDeps): AgentsModule {
  const service = createAgentService(deps);
  return { service, routes: agentsRoutes({ agents: service }) };
}
