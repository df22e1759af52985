import type { HostRule } from '../capabilities/index.js';
import type { Resolver } from '../capabilities/index.js';

/** The webhook settings (src/config.ts `WEBHOOK_*`, docs/operations.md), in the units the code uses. */
export interface WebhookSettings {
  allowPrivateHosts: readonly HostRule[];
  timeoutMs: number;
  maxResponseBytes: number;
  workers: number;
  perEndpoint: number;
  perOrg: number;
  retryBaseMs: number;
  retryMaxDelayMs: number;
  retryWindowMs: number;
  disableAfterFailures: number;
  disableAfterMs: number;
  secretOverlapMs: number;
  pollMs: number;
  endpointCacheMs: number;
  maxEndpointsPerOrg: number;
  maxPendingPerOrg: number;
  retentionMs: number;
  /** DNS resolution (tests and the address policy); default the system resolver. */
  resolve?: Resolver;
}

/** A claim outlives the attempt it covers: another instance takes the delivery over only once this has passed. */
export function leaseMsOf(s: Pick<WebhookSettings, 'timeoutMs'>): number {
  return 2 * s.timeoutMs + 1000;
}
