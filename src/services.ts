import type { AgentService } from './api/agents/index.js';
import type { HarnessService } from './api/harnesses/index.js';
import type { AuthModule } from './auth/index.js';
import type { Bus } from './bus/ports.js';
import type { CapabilityRegistry } from './capabilities/index.js';
import type { Config } from './config.js';
import type { Keyring } from './crypto/index.js';
import type { LlmModelResolver, LlmModelService, ModelSyncService } from './api/llm-models/index.js';
import type { LlmProviderService } from './api/llm-providers/index.js';
import type { Logger } from './log.js';
import type { Store } from './db/index.js';
import type { SessionService } from './api/sessions/service.js';
import type { SessionHub } from './events/session-hub.js';
import type { ConnectionLimits } from './events/connection-limits.js';
import type { Storage } from './session-storage/index.js';

/** What the route modules of src/api are built from; assembled once in src/app.ts. */
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
  /** Key-encryption keyring of the envelope encryption (src/crypto). */
  keyring: Keyring;
  llmProviders: LlmProviderService;
  llmModels: LlmModelService;
  modelSync: ModelSyncService;
  /** Model id (or null) → provider, vendor model and ids; for the turn engine. */
  modelResolver: LlmModelResolver;
  /** SSE fan-out of this instance. */
  hub: SessionHub;
  streamLimits: ConnectionLimits;
  /** Capability storage: session files, kv, secrets, SQL, schedules; images; user connections. */
  storage: Storage;
}
