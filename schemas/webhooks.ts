import { Type, type Static } from '@sinclair/typebox';
import { EVENT_TYPES } from './event-types.js';
import { ListOf, PageOf, ref, Timestamp, Uuid } from './common.js';

/**
 * What an endpoint may subscribe to: every catalogued event type but the token deltas (their
 * `*.completed` events carry the whole text; a webhook per token would be a denial of service
 * on the receiver). `webhook.test` is what the test-send route delivers.
 */
export const WEBHOOK_EVENT_TYPES = EVENT_TYPES.filter((t) => !t.endsWith('.delta'));
export const WEBHOOK_TEST_EVENT_TYPE = 'webhook.test';

const EventTypeName = Type.Union(
  WEBHOOK_EVENT_TYPES.map((t) => Type.Literal(t)),
  { description: 'A session event type (spec 6.2); deltas cannot be subscribed to.' },
);
const Url = Type.String({
  format: 'uri',
  minLength: 8,
  maxLength: 2048,
  pattern: '^https?://',
  description: 'http(s) URL that receives POSTs.',
  examples: ['https://crm.example.com/hooks/agents'],
});
const Description = Type.String({ maxLength: 500 });
const EndpointStatus = Type.Union([Type.Literal('active'), Type.Literal('disabled')]);

export const WebhookFilter = Type.Object(
  {
    agent_ids: Type.Optional(Type.Array(Uuid, { maxItems: 100, uniqueItems: true, description: 'Only sessions of these agents.' })),
    session_ids: Type.Optional(Type.Array(Uuid, { maxItems: 100, uniqueItems: true, description: 'Only these sessions.' })),
    session_tags: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
        maxItems: 20,
        uniqueItems: true,
        description: 'Only sessions with one of these tags.',
      }),
    ),
  },
  {
    $id: 'WebhookFilter',
    additionalProperties: false,
    description: 'Every given list must match (one entry of each); none given: every session.',
  },
);

export const WebhookEndpoint = Type.Object(
  {
    id: Uuid,
    organization_id: Uuid,
    url: Type.String(),
    description: Type.String(),
    event_types: Type.Array(Type.String()),
    filter: ref(WebhookFilter),
    status: EndpointStatus,
    disabled_reason: Type.Union([Type.String(), Type.Null()], {
      description: 'Why the service disabled the endpoint (sustained failure), or null.',
    }),
    disabled_at: Type.Union([Timestamp, Type.Null()]),
    consecutive_failures: Type.Integer({ minimum: 0 }),
    previous_secret_expires_at: Type.Union([Timestamp, Type.Null()], {
      description: 'While set and in the future, deliveries are signed with the previous secret too (rotation overlap).',
    }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'WebhookEndpoint', additionalProperties: false },
);

const Secret = Type.String({
  pattern: '^whsec_',
  description: 'The signing secret (Standard Webhooks `whsec_<base64>`); shown once.',
  examples: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
});

export const WebhookEndpointCreated = Type.Object(
  { endpoint: ref(WebhookEndpoint), secret: Secret },
  { $id: 'WebhookEndpointCreated', additionalProperties: false },
);

export const WebhookEndpointList = ListOf(ref(WebhookEndpoint), 'WebhookEndpointList');

export const WebhookEndpointCreate = Type.Object(
  {
    url: Url,
    description: Type.Optional(Description),
    event_types: Type.Array(EventTypeName, { minItems: 1, maxItems: WEBHOOK_EVENT_TYPES.length, uniqueItems: true }),
    filter: Type.Optional(ref(WebhookFilter)),
  },
  { $id: 'WebhookEndpointCreate', additionalProperties: false },
);

export const WebhookEndpointPatch = Type.Object(
  {
    url: Type.Optional(Url),
    description: Type.Optional(Description),
    event_types: Type.Optional(Type.Array(EventTypeName, { minItems: 1, maxItems: WEBHOOK_EVENT_TYPES.length, uniqueItems: true })),
    filter: Type.Optional(ref(WebhookFilter)),
    status: Type.Optional(EndpointStatus),
  },
  { $id: 'WebhookEndpointPatch', additionalProperties: false, minProperties: 1, examples: [{ status: 'active' }] },
);

export const WebhookSecretRotate = Type.Object(
  {
    overlap_seconds: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 604_800,
        description: 'How long the previous secret still signs (default: the operator setting).',
      }),
    ),
  },
  { $id: 'WebhookSecretRotate', additionalProperties: false },
);

export const WebhookSecret = Type.Object(
  { secret: Secret, previous_secret_expires_at: Type.Union([Timestamp, Type.Null()]) },
  { $id: 'WebhookSecret', additionalProperties: false },
);

const DeliveryState = Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')]);

export const WebhookDelivery = Type.Object(
  {
    id: Uuid,
    endpoint_id: Uuid,
    session_id: Type.Union([Uuid, Type.Null()]),
    event_id: Uuid,
    event_type: Type.String(),
    state: DeliveryState,
    attempts: Type.Integer({ minimum: 0 }),
    next_attempt_at: Timestamp,
    last_status: Type.Union([Type.Integer(), Type.Null()]),
    last_error: Type.Union([Type.String(), Type.Null()]),
    created_at: Timestamp,
    delivered_at: Type.Union([Timestamp, Type.Null()]),
  },
  { $id: 'WebhookDelivery', additionalProperties: false },
);

export const WebhookAttempt = Type.Object(
  {
    attempt: Type.Integer({ minimum: 1 }),
    started_at: Timestamp,
    status: Type.Union([Type.Integer(), Type.Null()], { description: 'HTTP status, or null when no response came.' }),
    latency_ms: Type.Integer({ minimum: 0 }),
    error: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'WebhookAttempt', additionalProperties: false },
);

export const WebhookDeliveryDetail = Type.Object(
  { delivery: ref(WebhookDelivery), attempts: Type.Array(ref(WebhookAttempt)) },
  { $id: 'WebhookDeliveryDetail', additionalProperties: false },
);

export const WebhookDeliveryPage = PageOf(ref(WebhookDelivery), 'WebhookDeliveryPage');

export const WebhookDeliveryQuery = Type.Object(
  {
    state: Type.Optional(DeliveryState),
    offset: Type.Integer({ minimum: 0, maximum: 2_147_483_647, default: 0 }),
    limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }),
  },
  { additionalProperties: false },
);

export const DeliveryParams = Type.Object({ id: Uuid, delivery_id: Uuid });

export type WebhookFilterValue = Static<typeof WebhookFilter>;
export type WebhookEndpointView = Static<typeof WebhookEndpoint>;
export type WebhookEndpointCreateInput = Static<typeof WebhookEndpointCreate>;
export type WebhookEndpointPatchInput = Static<typeof WebhookEndpointPatch>;
export type WebhookDeliveryView = Static<typeof WebhookDelivery>;
export type WebhookAttemptView = Static<typeof WebhookAttempt>;
export type WebhookDeliveryState = Static<typeof DeliveryState>;

export const webhookSchemas = [
  WebhookFilter,
  WebhookEndpoint,
  WebhookEndpointCreated,
  WebhookEndpointList,
  WebhookEndpointCreate,
  WebhookEndpointPatch,
  WebhookSecretRotate,
  WebhookSecret,
  WebhookDelivery,
  WebhookAttempt,
  WebhookDeliveryDetail,
  WebhookDeliveryPage,
];
