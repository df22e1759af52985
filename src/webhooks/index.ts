/**
 * Signed webhooks (issue 28 item 2; docs/decisions/0095-webhooks.md): the outbox tap on the event
 * log, the delivery loop and the API's service, built from the store, the keyring and settings.
 */
import type { SessionEvent } from '../../schemas/events.js';
import type { Bus } from '../bus/index.js';
import type { Keyring } from '../crypto/index.js';
import type { Store } from '../db/index.js';
import type { Logger } from '../log.js';
import { createDeliverer } from './deliverer.js';
import { createDeliveryStore } from './delivery-store.js';
import { createEndpointStore } from './endpoint-store.js';
import { createOutbox } from './outbox.js';
import { createWebhookService } from './service.js';
import type { WebhookSettings } from './settings.js';

export type { WebhookSettings } from './settings.js';
export { webhookSettingsOf } from './config.js';
export type { WebhookService } from './service.js';

export interface WebhooksDeps {
  store: Store;
  keyring: Keyring;
  log: Logger;
  instanceId: string;
}

export function createWebhooks(deps: WebhooksDeps, settings: WebhookSettings) {
  const log = deps.log.child({ component: 'webhooks' });
  const endpoints = createEndpointStore(deps.store, { maxPerOrg: settings.maxEndpointsPerOrg });
  const deliveries = createDeliveryStore(deps.store, { instanceId: deps.instanceId });
  const outbox = createOutbox(
    { store: deps.store, endpoints, deliveries, log, wake: () => deliverer.wake() },
    { endpointCacheMs: settings.endpointCacheMs, maxPendingPerOrg: settings.maxPendingPerOrg },
  );
  const deliverer = createDeliverer({ deliveries, keyring: deps.keyring, log, onDisabled: (org) => outbox.invalidate(org) }, settings);
  const service = createWebhookService(
    { endpoints, deliveries, keyring: deps.keyring, changed: (org) => outbox.invalidate(org), wake: () => deliverer.wake() },
    settings,
  );
  return {
    service,
    deliverer,
    /** Waits for deliveries still being queued (the store must outlive them). */
    flush: () => outbox.flush(),
    /** The bus with its event log's appends feeding the outbox. */
    tap: (bus: Bus<SessionEvent>): Bus<SessionEvent> => ({ ...bus, events: outbox.wrap(bus.events) }),
  };
}

export type Webhooks = ReturnType<typeof createWebhooks>;
