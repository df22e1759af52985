import { parseHostAllowlist } from '../capabilities/index.js';
import type { Config } from '../config.js';
import type { WebhookSettings } from './settings.js';

/** The `WEBHOOK_*` settings as the webhook modules take them. */
export function webhookSettingsOf(c: Config): WebhookSettings {
  return {
    allowPrivateHosts: parseHostAllowlist(c.WEBHOOK_ALLOWED_PRIVATE_HOSTS),
    timeoutMs: c.WEBHOOK_TIMEOUT_MS,
    maxResponseBytes: c.WEBHOOK_MAX_RESPONSE_BYTES,
    workers: c.WEBHOOK_WORKERS,
    perEndpoint: c.WEBHOOK_CONCURRENCY_PER_ENDPOINT,
    perOrg: c.WEBHOOK_CONCURRENCY_PER_ORG,
    retryBaseMs: c.WEBHOOK_RETRY_BASE_MS,
    retryMaxDelayMs: c.WEBHOOK_RETRY_MAX_DELAY_MS,
    retryWindowMs: c.WEBHOOK_RETRY_WINDOW_MS,
    disableAfterFailures: c.WEBHOOK_DISABLE_AFTER_FAILURES,
    disableAfterMs: c.WEBHOOK_DISABLE_AFTER_MS,
    secretOverlapMs: c.WEBHOOK_SECRET_OVERLAP_MS,
    pollMs: c.WEBHOOK_POLL_MS,
    endpointCacheMs: c.WEBHOOK_ENDPOINT_CACHE_MS,
    maxEndpointsPerOrg: c.WEBHOOK_MAX_ENDPOINTS_PER_ORG,
    maxPendingPerOrg: c.WEBHOOK_MAX_PENDING_PER_ORG,
    retentionMs: c.WEBHOOK_RETENTION_MS,
  };
}
