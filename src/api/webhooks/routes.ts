import { ErrorResponse, IdParams, ref } from '../../../schemas/common.js';
import {
  DeliveryParams,
  WebhookDelivery,
  WebhookDeliveryDetail,
  WebhookDeliveryPage,
  WebhookDeliveryQuery,
  WebhookEndpoint,
  WebhookEndpointCreate,
  WebhookEndpointCreated,
  WebhookEndpointList,
  WebhookEndpointPatch,
  WebhookSecret,
  WebhookSecretRotate,
} from '../../../schemas/webhooks.js';
import { route, type Route } from '../../http/index.js';
import type { WebhookService } from '../../webhooks/index.js';

const tags = ['webhooks'];
const err = ref(ErrorResponse);

/**
 * An organisation's webhook endpoints (docs/decisions/0095-webhooks.md). Admin-only, reads included:
 * endpoints carry every session's events of the organisation, and sessions are personal
 * (docs/decisions/0018-member-admin-matrix.md).
 */
export function webhookRoutes({ webhooks }: { webhooks: WebhookService }): Route[] {
  return [
    route(
      {
        method: 'GET',
        path: '/v1/webhooks',
        auth: 'admin',
        summary: "The organisation's webhook endpoints",
        tags,
        schema: { response: { 200: ref(WebhookEndpointList) } },
      },
      async (_input, { principal }) => {
        const data = await webhooks.list(principal.org_id);
        return { status: 200, body: { data, total: data.length } };
      },
    ),
    route(
      {
        method: 'POST',
        path: '/v1/webhooks',
        auth: 'admin',
        summary: 'Register an endpoint; its signing secret is in this answer only',
        tags,
        schema: { body: ref(WebhookEndpointCreate), response: { 201: ref(WebhookEndpointCreated), 400: err, 409: err } },
      },
      async ({ body }, { principal }) => ({ status: 201, body: await webhooks.create(principal.org_id, body) }),
    ),
    route(
      {
        method: 'GET',
        path: '/v1/webhooks/:id',
        auth: 'admin',
        summary: 'One endpoint (no secret)',
        tags,
        schema: { params: IdParams, response: { 200: ref(WebhookEndpoint), 403: err, 404: err } },
      },
      async ({ params }, { principal }) => ({ status: 200, body: await webhooks.get(principal.org_id, params.id) }),
    ),
    route(
      {
        method: 'PATCH',
        path: '/v1/webhooks/:id',
        auth: 'admin',
        summary: 'Change an endpoint; `status: active` re-enables a disabled one',
        tags,
        schema: {
          params: IdParams,
          body: ref(WebhookEndpointPatch),
          response: { 200: ref(WebhookEndpoint), 400: err, 403: err, 404: err },
        },
      },
      async ({ params, body }, { principal }) => ({ status: 200, body: await webhooks.update(principal.org_id, params.id, body) }),
    ),
    route(
      {
        method: 'DELETE',
        path: '/v1/webhooks/:id',
        auth: 'admin',
        summary: 'Delete an endpoint and its delivery log',
        tags,
        schema: { params: IdParams, response: { 204: null, 403: err, 404: err } },
      },
      async ({ params }, { principal }) => {
        await webhooks.remove(principal.org_id, params.id);
        return { status: 204 };
      },
    ),
    route(
      {
        method: 'POST',
        path: '/v1/webhooks/:id/rotate-secret',
        auth: 'admin',
        summary: 'A new signing secret (in this answer only); the previous one signs too until the overlap ends',
        tags,
        schema: { params: IdParams, body: ref(WebhookSecretRotate), response: { 200: ref(WebhookSecret), 403: err, 404: err } },
      },
      async ({ params, body }, { principal }) => ({
        status: 200,
        body: await webhooks.rotate(
          principal.org_id,
          params.id,
          body.overlap_seconds === undefined ? undefined : body.overlap_seconds * 1000,
        ),
      }),
    ),
    route(
      {
        method: 'POST',
        path: '/v1/webhooks/:id/test',
        auth: 'admin',
        summary: 'Queue a signed `webhook.test` delivery to the endpoint',
        tags,
        schema: { params: IdParams, response: { 202: ref(WebhookDelivery), 403: err, 404: err, 409: err } },
      },
      async ({ params }, { principal }) => ({ status: 202, body: await webhooks.testSend(principal.org_id, params.id) }),
    ),
    route(
      {
        method: 'GET',
        path: '/v1/webhooks/:id/deliveries',
        auth: 'admin',
        summary: "The endpoint's deliveries, newest first",
        tags,
        schema: { params: IdParams, query: WebhookDeliveryQuery, response: { 200: ref(WebhookDeliveryPage), 403: err, 404: err } },
      },
      async ({ params, query }, { principal }) => ({ status: 200, body: await webhooks.deliveries(principal.org_id, params.id, query) }),
    ),
    route(
      {
        method: 'GET',
        path: '/v1/webhooks/:id/deliveries/:delivery_id',
        auth: 'admin',
        summary: 'One delivery with its attempts (status, latency, error)',
        tags,
        schema: { params: DeliveryParams, response: { 200: ref(WebhookDeliveryDetail), 403: err, 404: err } },
      },
      async ({ params }, { principal }) => ({
        status: 200,
        body: await webhooks.delivery(principal.org_id, params.id, params.delivery_id),
      }),
    ),
    route(
      {
        method: 'POST',
        path: '/v1/webhooks/:id/deliveries/:delivery_id/redeliver',
        auth: 'admin',
        summary: 'Send a delivery again (same webhook-id), now',
        tags,
        schema: { params: DeliveryParams, response: { 202: ref(WebhookDelivery), 403: err, 404: err } },
      },
      async ({ params }, { principal }) => ({
        status: 202,
        body: await webhooks.redeliver(principal.org_id, params.id, params.delivery_id),
      }),
    ),
  ];
}
