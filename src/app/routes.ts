import { namedSchemas } from '../../schemas/index.js';
import { createAuthApiModule } from '../api/auth/index.js';
import { createCapabilitiesModule } from '../api/capabilities/index.js';
import { createConnectionsModule } from '../api/connections/index.js';
import { createEventsModule } from '../api/events/index.js';
import { createFsModule } from '../api/fs/index.js';
import { createImagesModule } from '../api/images/index.js';
import { createApiRoutes } from '../api/index.js';
import { createMcpServerModule } from '../api/mcp-server/index.js';
import { createMetricsModule } from '../api/metrics/index.js';
import { createOrgsModule } from '../api/orgs/index.js';
import { createStorageModule } from '../api/storage/index.js';
import { createSystemModule } from '../api/system/index.js';
import { createUsersModule } from '../api/users/index.js';
import { createWebhooksModule } from '../api/webhooks/index.js';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import { buildOpenApi, type Route } from '../http/index.js';
import type { EventStreams } from './event-streams.js';
import type { Infrastructure } from './infrastructure.js';
import type { Modules } from './modules.js';
import type { TurnModule } from './turns.js';

/** The API's version in the OpenAPI document (the package version is SERVICE_VERSION). */
const API_VERSION = '1.0.0';

/**
 * Every route this instance serves on its main port, and the OpenAPI document built from them:
 * /health and the document on every role; the API (and /metrics behind its token) where ROLE
 * serves it. `prometheusRoutes` are for the separate metrics listener (METRICS_PORT).
 */
export function buildRoutes(
  config: Config,
  infra: Infrastructure,
  modules: Modules,
  streams: EventStreams,
  turns: TurnModule,
  log: Logger,
) {
  const { store, checks, observability } = infra;
  const { auth, storage, capabilities } = modules;
  const routes: Route[] = [];
  routes.push(...createSystemModule({ checks, openApi: () => openApi }).routes);
  const { scrape } = observability;
  const metrics = createMetricsModule({ timeseries: observability.timeseries, scrape: scrape ?? undefined, token: config.METRICS_TOKEN });
  // /metrics on the main port only behind its token; with METRICS_PORT it is served there alone.
  if (scrape && config.METRICS_TOKEN && config.METRICS_PORT === undefined) routes.push(...metrics.prometheusRoutes);
  if (config.ROLE !== 'worker') {
    const api = {
      auth: createAuthApiModule({ store, auth }),
      users: createUsersModule({ store, auth }),
      orgs: createOrgsModule({ store, auth }),
      agents: modules.agents,
      harnesses: modules.harnesses,
      capabilities: createCapabilitiesModule({ capabilities }),
      sessions: modules.sessions,
      fs: createFsModule({ storage }),
      storage: createStorageModule({ storage }),
      images: createImagesModule({ storage }),
      connections: createConnectionsModule({ connections: storage.connections }),
      llmProviders: modules.llm.providers,
      llmModels: modules.llm,
      events: createEventsModule({
        store,
        bus: streams.served,
        hub: streams.hub,
        limits: streams.streamLimits,
        owners: modules.sessionOwners,
        listMaxBytes: config.EVENTS_LIST_MAX_BYTES,
      }),
      webhooks: createWebhooksModule({ webhooks: infra.webhooks.service }),
      mcp: createMcpServerModule({
        store,
        bus: infra.bus,
        log,
        sessions: modules.sessions.service,
        turns: turns.service,
        timeoutMs: config.MCP_SERVER_TURN_TIMEOUT_MS,
      }),
    };
    routes.push(...createApiRoutes(api, { turns: turns.routes }), ...metrics.routes);
  }
  const openApi = buildOpenApi(routes, namedSchemas, { title: 'Agent Session Service', version: API_VERSION, prefix: config.API_PREFIX });
  return { routes, openApi, prometheusRoutes: scrape ? metrics.prometheusRoutes : undefined };
}
