export { agentsRoutes } from './routes.js';
export { createAgentService } from './service.js';
export { createClientToolChecker } from './client-tools.js';
export { clientToolsOf } from './compat-aliases.js';
export type { ActiveAgent, AgentService, AgentServiceDeps } from './service.js';
export { AGENT_BODY_LIMITS, AGENT_LIMITS, AGENT_MAX_BODY_BYTES, checkAgentLimits } from './limits.js';
export type { ModelLookup } from './types.js';
export { createAgentsModule } from './module.js';
export type { AgentsModule } from './module.js';
