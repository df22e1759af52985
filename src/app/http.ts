import { namedSchemas } from '../../schemas/index.js';
import { ErrorResponse } from '../../schemas/common.js';
import type { Config } from '../config.js';
import { createConsoleSite } from '../console/index.js';
import { createIdempotencyKeys, createProcessLiveness } from '../db/index.js';
import {
  createClientAddressResolver,
  createHttpServer,
  createPipeline,
  createRouter,
  createValidation,
  parseCorsOrigins,
  type Route,
} from '../http/index.js';
import type { Logger } from '../log.js';
import type { StartPhases } from '../start-phases.js';
import type { Closers } from './closers.js';
import type { Infrastructure } from './infrastructure.js';
import type { Modules } from './modules.js';

/**
 * The main HTTP server, not listening yet: routing, validation (compiled here, so a bad schema
 * stops the start), authentication, idempotency keys, CORS, the web console and SSE settings.
 */
export function buildHttpServer(
  config: Config,
  routes: Route[],
  { store, observability, tracing }: Infrastructure,
  { auth }: Modules,
  { log, phases, closers, instanceId }: { log: Logger; phases: StartPhases; closers: Closers; instanceId: string },
) {
  const router = createRouter(routes, config.API_PREFIX);
  const cors = parseCorsOrigins(config.CORS_ALLOWED_ORIGINS);
  const validation = createValidation(namedSchemas);
  // The web console is served where the API is (ROLE=worker serves no API, so no console either).
  const site = config.ROLE !== 'worker' ? createConsoleSite({ apiPrefix: config.API_PREFIX }) : undefined;
  phases.lap('console');
  // Closed after the HTTP server (closers run in reverse): requests still running keep their keys.
  const liveness = createProcessLiveness({ store, log }, { instanceId });
  closers.add('process-liveness', () => liveness.close());
  const idempotency = createIdempotencyKeys({ store, log, liveness });
  closers.add('idempotency-keys', async () => idempotency.close());
  const pipeline = createPipeline({
    router,
    validation,
    authenticate: auth.authenticate,
    maxJsonDepth: config.MAX_JSON_DEPTH,
    cors,
    site,
    observer: observability.http,
    tracing,
    idempotency,
    ...(config.RESPONSE_VALIDATION ? { checkRepliesWith: ErrorResponse } : {}),
  });
  // ajv compiles every route's validators here (style rule 6: at start, so a bad schema stops it).
  phases.lap('validators');
  const server = createHttpServer(
    {
      host: config.HOST,
      port: config.PORT,
      maxBodyBytes: config.MAX_BODY_BYTES,
      clientAddress: createClientAddressResolver(config.TRUST_PROXY),
      cors,
      sse: {
        heartbeatMs: config.SSE_HEARTBEAT_MS,
        cycleMs: config.SSE_CYCLE_MS,
        quietMs: config.SSE_CYCLE_QUIET_MS,
        maxBufferBytes: config.SSE_MAX_BUFFER_BYTES,
        observer: observability.sse,
      },
    },
    { log, router, pipeline },
  );
  return { server, validation };
}

/** `/metrics` alone on METRICS_HOST:METRICS_PORT (behind METRICS_TOKEN when that is set too). */
export async function listenForMetrics(
  config: Config,
  deps: { log: Logger; validation: ReturnType<typeof createValidation>; routes: Route[] },
) {
  const router = createRouter(deps.routes);
  const authenticate = async (): Promise<never> => {
    throw new Error('the metrics listener has no authenticated routes');
  };
  const pipeline = createPipeline({ router, validation: deps.validation, authenticate });
  const server = createHttpServer(
    {
      host: config.METRICS_HOST ?? config.HOST,
      port: config.METRICS_PORT!,
      maxBodyBytes: 1024,
      sse: { heartbeatMs: config.SSE_HEARTBEAT_MS, cycleMs: config.SSE_CYCLE_MS, maxBufferBytes: config.SSE_MAX_BUFFER_BYTES },
    },
    { log: deps.log, router, pipeline },
  );
  const port = await server.listen();
  deps.log.info({ port, host: config.METRICS_HOST ?? config.HOST }, 'metrics listening');
  return { server, port };
}
