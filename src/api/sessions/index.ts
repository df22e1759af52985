import type { SessionEvent } from '../../../schemas/events.js';
import type { Bus } from '../../bus/index.js';
import type { CapabilityRegistry } from '../../capabilities/index.js';
import type { Store } from '../../db/index.js';
import type { Route } from '../../http/index.js';
import type { Logger } from '../../log.js';
import type { AgentService, ModelLookup } from '../agents/index.js';
import type { HarnessService } from '../harnesses/index.js';
import { sessionRoutes } from './routes.js';
import { createSessionService, type SessionService, type SessionServiceDeps } from './service.js';
import { createSessionSetupResolver } from './setup-resolver.js';

export type { SessionService } from './service.js';
export type { SessionLink } from './child-link.js';

export interface SessionsModuleDeps {
  store: Store;
  bus: Bus<SessionEvent>;
  log: Logger;
  agents: AgentService;
  harnesses: HarnessService;
  capabilities: CapabilityRegistry;
  models?: ModelLookup;
  connections?: SessionServiceDeps['connections'];
  owners?: SessionServiceDeps['owners'];
  starterFiles: SessionServiceDeps['starterFiles'];
  maxSessionsPerOrg?: number;
  /** COMPACTION_THRESHOLD_PERCENT: the most a session's `compaction.threshold_percent` may be. */
  maxCompactionThresholdPercent?: number;
}

export interface SessionsModule {
  service: SessionService;
  routes: Route[];
}

/** Session lifecycle; the setup resolver (harness, agent, capabilities, model snapshot) is its own. */
export function createSessionsModule({
  store,
  bus,
  log,
  agents,
  harnesses,
  capabilities,
  models,
  connections,
  owners,
  starterFiles,
  maxSessionsPerOrg,
  maxCompactionThresholdPercent,
}: SessionsModuleDeps): SessionsModule {
  const setup = createSessionSetupResolver({ agents, harnesses, capabilities, models, maxCompactionThresholdPercent });
  const service = createSessionService({ store, bus, log, setup, owners, connections, starterFiles, maxSessionsPerOrg });
  return { service, routes: sessionRoutes({ sessions: service }) };
}
