/** What the API does with webhooks: endpoints of the caller's organisation, their secrets and delivery log. */
import { WEBHOOK_TEST_EVENT_TYPE, type WebhookEndpointCreateInput, type WebhookEndpointPatchInput } from '../../schemas/webhooks.js';
import type { Keyring } from '../crypto/index.js';
import { InvalidRequestError, QuotaExceededError } from '../errors.js';
import { newId } from '../ids.js';
import type { DeliveryStore } from './delivery-store.js';
import type { EndpointStore } from './endpoint-store.js';
import { newSigningSecret, openSecret, sealSecret } from './secrets.js';
import type { WebhookSettings } from './settings.js';
import { checkTarget, urlProblem } from './target-policy.js';

export interface WebhookServiceDeps {
  endpoints: EndpointStore;
  deliveries: DeliveryStore;
  keyring: Keyring;
  /** The organisation's endpoints changed: the outbox re-reads them. */
  changed(orgId: string): void;
  /** Deliveries were queued: the deliverer looks now. */
  wake(): void;
}

export function createWebhookService(deps: WebhookServiceDeps, s: WebhookSettings) {
  const { endpoints, deliveries } = deps;

  /** 400 unless the URL may be a target now (the same check runs again before every attempt). */
  async function assertUrlAllowed(text: string): Promise<void> {
    const problem = urlProblem(text);
    if (problem) throw new InvalidRequestError(`Invalid request: ${problem}`);
    const check = await checkTarget(new URL(text), s);
    if (!check.ok) throw new InvalidRequestError(`Invalid request: url ${check.reason}`);
  }

  /** Runs `fn` on the caller's endpoint `id` (404 unknown, 403 another organisation's). */
  async function onOwn<T>(orgId: string, id: string, fn: () => Promise<T>): Promise<T> {
    await endpoints.assertOwned(orgId, id);
    return fn();
  }

  return {
    list: (orgId: string) => endpoints.list(orgId),
    get: (orgId: string, id: string) => onOwn(orgId, id, () => endpoints.get(orgId, id)),

    async create(orgId: string, input: WebhookEndpointCreateInput) {
      await assertUrlAllowed(input.url);
      const id = newId();
      const secret = newSigningSecret();
      const endpoint = await endpoints.insert(orgId, {
        id,
        url: input.url,
        description: input.description ?? '',
        event_types: input.event_types,
        filter: input.filter ?? {},
        sealedSecret: sealSecret(deps.keyring, secret, orgId, id, 'current'),
      });
      deps.changed(orgId);
      return { endpoint, secret };
    },

    async update(orgId: string, id: string, patch: WebhookEndpointPatchInput) {
      await endpoints.assertOwned(orgId, id);
      if (patch.url !== undefined) await assertUrlAllowed(patch.url);
      const endpoint = await endpoints.update(orgId, id, patch);
      deps.changed(orgId);
      if (patch.status === 'active') deps.wake();
      return endpoint;
    },

    async remove(orgId: string, id: string): Promise<void> {
      await endpoints.assertOwned(orgId, id);
      await endpoints.remove(orgId, id);
      deps.changed(orgId);
    },

    /** A new secret (answered once); the current one keeps signing, beside it, for `overlapMs`. */
    async rotate(orgId: string, id: string, overlapMs = s.secretOverlapMs) {
      await endpoints.assertOwned(orgId, id);
      const secret = newSigningSecret();
      const until = new Date(Date.now() + overlapMs);
      await endpoints.rotate(
        orgId,
        id,
        (sealedCurrent) => ({
          sealedNew: sealSecret(deps.keyring, secret, orgId, id, 'current'),
          sealedPrevious: sealSecret(deps.keyring, openSecret(deps.keyring, sealedCurrent, orgId, id, 'current'), orgId, id, 'previous'),
        }),
        until,
      );
      return { secret, previous_secret_expires_at: overlapMs > 0 ? until.toISOString() : null };
    },

    /** Queues a `webhook.test` delivery to the endpoint (whatever its event types), signed like any other. */
    async testSend(orgId: string, id: string) {
      const endpoint = await onOwn(orgId, id, () => endpoints.get(orgId, id));
      const deliveryId = newId();
      const eventId = newId();
      const payload = {
        type: WEBHOOK_TEST_EVENT_TYPE,
        timestamp: new Date().toISOString(),
        data: { organization_id: orgId, endpoint_id: endpoint.id, event_id: eventId },
      };
      const row = { id: deliveryId, endpoint_id: id, event_id: eventId, event_type: WEBHOOK_TEST_EVENT_TYPE, sequence: 0, payload };
      const { inserted } = await deliveries.enqueue(orgId, null, [row], s.maxPendingPerOrg);
      if (!inserted)
        throw new QuotaExceededError(
          'count',
          `Webhook delivery quota reached: at most ${s.maxPendingPerOrg} deliveries wait per organisation`,
        );
      deps.wake();
      return (await deliveries.get(orgId, id, deliveryId)).delivery;
    },

    deliveries: (orgId: string, id: string, query: Parameters<DeliveryStore['list']>[2]) =>
      onOwn(orgId, id, () => deliveries.list(orgId, id, query)),
    delivery: (orgId: string, id: string, deliveryId: string) => onOwn(orgId, id, () => deliveries.get(orgId, id, deliveryId)),
    async redeliver(orgId: string, id: string, deliveryId: string) {
      const d = await onOwn(orgId, id, () => deliveries.redeliver(orgId, id, deliveryId));
      deps.wake();
      return d;
    },
  };
}

export type WebhookService = ReturnType<typeof createWebhookService>;
