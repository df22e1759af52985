import type { SessionEvent } from '../../schemas/events.js';
import type { HealthCheck } from '../api/system/index.js';
import { createBus, type Bus } from '../bus/index.js';
import type { Config } from '../config.js';
import { loadKeyring } from '../crypto/index.js';
import { createStore } from '../db/index.js';
import { acquireDataDirLock, type DataDirLock } from '../db/index.js';
import type { EmbeddedDatabase } from '../db/index.js';
import type { Logger } from '../log.js';
import { createObservability, instrumentBus } from '../observability/index.js';
import { createTracing, otlpTracesUrl } from '../observability/index.js';
import type { StartPhases } from '../start-phases.js';
import { SERVICE_VERSION } from '../version.js';
import { createWebhooks, webhookSettingsOf } from '../webhooks/index.js';
import type { Closers } from './closers.js';

export interface InfrastructureDeps {
  log: Logger;
  phases: StartPhases;
  closers: Closers;
  instanceId: string;
  /** Embedded mode: the lock of DATA_DIR when the caller took it already. */
  dataDirLock?: DataDirLock;
  /** Embedded mode: the database thread when the caller started it already. */
  embeddedDatabase?: Promise<EmbeddedDatabase>;
  /** Tests only: wraps the bus the API and the worker use; health checks use the bare bus. */
  wrapBus?: (bus: Bus<SessionEvent>) => Bus<SessionEvent>;
}

/**
 * What everything else stands on: the data directory's lock, tracing, the keyring, the store and
 * the bus (with their health checks), and observability around them.
 */
export async function openInfrastructure(config: Config, deps: InfrastructureDeps) {
  const { log, phases, closers, instanceId } = deps;
  // Single writer: PGlite files (and the embedded key) belong to one process (src/db/data-dir-lock.ts).
  const lock =
    config.mode === 'embedded'
      ? (deps.dataDirLock ??
        (await acquireDataDirLock(config.DATA_DIR, { holder: 'service', host: config.HOST, port: config.PORT, action: 'cannot start' })))
      : undefined;
  if (lock) closers.add('data-dir-lock', async () => lock.release());
  const tracing = await phases.time('tracing', () =>
    createTracing(
      {
        tracesUrl: otlpTracesUrl(config.OTEL_EXPORTER_OTLP_ENDPOINT, config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT),
        serviceName: config.OTEL_SERVICE_NAME,
        serviceVersion: SERVICE_VERSION,
        instanceId,
        role: config.ROLE,
        exportDelayMs: config.OTEL_BSP_SCHEDULE_DELAY,
      },
      { log },
    ),
  );
  closers.add('tracing', () => tracing.close());
  const { keyring, created: keyCreated, path: keyPath } = await phases.time('keyring', () => loadKeyring(config));
  if (keyCreated) log.warn({ path: keyPath }, 'generated a secrets encryption key for embedded mode; keep it with the data directory');
  const { store, bareBus } = await openStoreAndBus(config, deps);
  const checks: HealthCheck[] = [
    { name: 'database', check: () => store.ping() },
    { name: 'bus', check: () => bareBus.ping() },
  ];
  const observability = createObservability(
    { sql: store.sql, log, checks },
    {
      instanceId,
      role: config.ROLE,
      mode: config.mode,
      version: SERVICE_VERSION,
      metrics: config.METRICS_TOKEN !== undefined || config.METRICS_PORT !== undefined,
      flushMs: config.TIMESERIES_FLUSH_MS,
    },
  );
  closers.add('observability', () => observability.close());
  // Claims, completions and appends are counted here, not inside the turn engine.
  const instrumented = instrumentBus(bareBus, observability.bus);
  // Appends of subscribed events queue webhook deliveries (src/webhooks/outbox.ts).
  const webhooks = createWebhooks({ store, keyring, log, instanceId }, webhookSettingsOf(config));
  closers.add('webhook-outbox', () => webhooks.flush());
  const tapped = webhooks.tap(instrumented);
  const bus = deps.wrapBus ? deps.wrapBus(tapped) : tapped;
  return { lock, tracing, keyring, store, bus, checks, observability, webhooks };
}

export type Infrastructure = Awaited<ReturnType<typeof openInfrastructure>>;

/**
 * The database and NATS are independent: connecting to both at once (migrations on one, stream
 * convergence on the other) shortens a start by the shorter of the two (issue 13 item 7).
 * Without NATS_URL the bus is the local one, on the store.
 */
async function openStoreAndBus(config: Config, { log, phases, closers, embeddedDatabase, instanceId }: InfrastructureDeps) {
  const [storeResult, natsResult] = await Promise.allSettled([
    createStore({
      databaseUrl: config.DATABASE_URL,
      dataDir: config.DATA_DIR,
      poolMax: config.DATABASE_POOL_MAX,
      preparedStatements: config.DATABASE_PREPARED_STATEMENTS,
      expectedInstances: config.EXPECTED_INSTANCES,
      log,
      phases,
      embeddedDatabase,
      embeddedVacuumIntervalMs: config.EMBEDDED_VACUUM_INTERVAL_MS,
    }),
    config.NATS_URL
      ? createBus<SessionEvent>({
          kind: 'nats',
          url: config.NATS_URL,
          // Names the connection in the servers' /connz and nats-top: which instance sits on which node.
          name: `agent-session-service/${instanceId}`,
          log,
          shards: config.NATS_EVENT_SHARDS,
          liveWildcardMinSessions: config.NATS_LIVE_WILDCARD_MIN_SESSIONS,
          ackWaitMs: config.TURN_CLAIM_TIMEOUT_MS,
          auth: {
            credsFile: config.NATS_CREDS,
            nkeySeed: config.NATS_NKEY_SEED,
            tls: { caFile: config.NATS_TLS_CA, certFile: config.NATS_TLS_CERT, keyFile: config.NATS_TLS_KEY },
          },
          replicas: config.NATS_REPLICAS === 'auto' ? 'auto' : Number(config.NATS_REPLICAS),
          phases,
          role: config.ROLE,
        })
      : null,
  ]);
  // Register whatever opened before failing, so the error path closes it.
  if (storeResult.status === 'fulfilled') closers.add('store', () => storeResult.value.close());
  if (natsResult.status === 'fulfilled' && natsResult.value) {
    const natsBus = natsResult.value;
    closers.add('bus', () => natsBus.close());
  }
  if (storeResult.status === 'rejected') throw storeResult.reason;
  if (natsResult.status === 'rejected') throw natsResult.reason;
  const store = storeResult.value;
  if (natsResult.value) return { store, bareBus: natsResult.value };
  const localBus = await createBus<SessionEvent>({ kind: 'local', store, log, leaseMs: config.TURN_CLAIM_TIMEOUT_MS });
  closers.add('bus', () => localBus.close());
  return { store, bareBus: localBus };
}
