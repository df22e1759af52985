import type { AgentService } from './api/agents/index.js';
import type { HarnessService } from './api/harnesses/index.js';
import type { AuthModule } from './auth/index.js';
import type { Bus } from './bus/ports.js';
import type { CapabilityRegistry } from './capabilities/index.js';
import type { Config } from './config.js';
import type { Logger } from './log.js';
import type { Store } from './store/index.js';
import type { SessionService } from './api/sessions/service.js';
import type { TurnService } from './api/turns/service.js';
import type { SessionHub } from './events/session-hub.js';
import type { ConnectionLimits } from './events/connection-limits.js';

/** What route modules and actors are built from; assembled once in src/app.ts. */
export interface AppServices {
  config: Config;
  log: Logger;
  store: Store;
  bus: Bus;
  auth: AuthModule;
  /** The capability registry, built once. */
  capabilities: CapabilityRegistry;
  agents: AgentService;
  harnesses: HarnessService;
  sessions: SessionService;
  /** Turns from outside HTTP too (the scheduler): `turns.submitMessage({org_id}, sessionId, content, controls)`. */
  turns: TurnService;
  /** SSE fan-out of this instance. */
  hub: SessionHub;
  streamLimits: ConnectionLimits;
}
