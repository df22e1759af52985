import { Type, type Static } from '@sinclair/typebox';
import { ListOf, Timestamp, Uuid } from './common.js';

export const LoginRequest = Type.Object(
  { email: Type.String({ minLength: 1, maxLength: 254 }), password: Type.String({ minLength: 1, maxLength: 1024 }) },
  { $id: 'LoginRequest', additionalProperties: false },
);

export const TokenPair = Type.Object(
  {
    access_token: Type.String({ description: 'A JWT; send it as `Authorization: Bearer <token>`.' }),
    refresh_token: Type.String({ description: 'Single use: POST /v1/auth/refresh returns its successor.' }),
    token_type: Type.Literal('Bearer'),
    expires_in: Type.Integer({ minimum: 0, description: 'Seconds until the access token expires.' }),
  },
  { $id: 'TokenPair', additionalProperties: false },
);

export const RefreshRequest = Type.Object(
  { refresh_token: Type.String({ minLength: 1, maxLength: 512 }) },
  { $id: 'RefreshRequest', additionalProperties: false },
);

export const Me = Type.Object(
  {
    user: Type.Ref('User'),
    organization: Type.Ref('Organization'),
    via: Type.Union([Type.Literal('api_key'), Type.Literal('access_token')], { description: 'How this request authenticated.' }),
    api_key_id: Type.Optional(Uuid),
  },
  { $id: 'Me', additionalProperties: false },
);

export const ApiKeyInfo = Type.Object(
  {
    id: Uuid,
    user_id: Uuid,
    name: Type.String(),
    prefix: Type.String({ description: 'The first characters of the key, for recognition.' }),
    expires_at: Type.Union([Timestamp, Type.Null()]),
    last_used_at: Type.Union([Timestamp, Type.Null()], { description: 'Updated at most once a minute.' }),
    created_at: Timestamp,
  },
  { $id: 'ApiKeyInfo', additionalProperties: false },
);

export const ApiKeyCreate = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 256 }),
    expires_at: Type.Optional(Type.Union([Timestamp, Type.Null()], { description: 'Absent or null: the key does not expire.' })),
  },
  { $id: 'ApiKeyCreate', additionalProperties: false },
);

export const ApiKeyCreated = Type.Object(
  {
    id: Uuid,
    user_id: Uuid,
    name: Type.String(),
    prefix: Type.String(),
    expires_at: Type.Union([Timestamp, Type.Null()]),
    last_used_at: Type.Null(),
    created_at: Timestamp,
    key: Type.String({ description: 'The key itself; shown only in this response.' }),
  },
  { $id: 'ApiKeyCreated', additionalProperties: false },
);

export const ApiKeyList = ListOf(Type.Ref('ApiKeyInfo'), 'ApiKeyList');

export const ApiKeyListQuery = Type.Object({
  scope: Type.Union([Type.Literal('own'), Type.Literal('org')], {
    default: 'own',
    description: "`own`: the caller's keys; `org`: every live key of the organisation (admins only).",
  }),
});

export const StreamToken = Type.Object(
  {
    token: Type.String({ description: 'Pass as `?access_token=` to GET /v1/sessions/{id}/sse of this session only.' }),
    expires_at: Timestamp,
  },
  { $id: 'StreamToken', additionalProperties: false },
);

export type LoginBody = Static<typeof LoginRequest>;
export type TokenPairBody = Static<typeof TokenPair>;
export type ApiKeyCreateBody = Static<typeof ApiKeyCreate>;
export type ApiKeyInfoBody = Static<typeof ApiKeyInfo>;

export const authSchemas = [LoginRequest, TokenPair, RefreshRequest, Me, ApiKeyInfo, ApiKeyCreate, ApiKeyCreated, ApiKeyList, StreamToken];
