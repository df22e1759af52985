import { ErrorResponse, IdParams, ref } from '../../../schemas/common.js';
import {
  ApiKeyCreate,
  ApiKeyCreated,
  ApiKeyList,
  ApiKeyListQuery,
  LoginRequest,
  Me,
  RefreshRequest,
  StreamToken,
  TokenPair,
} from '../../../schemas/auth.js';
import { route, type Route } from '../../http/index.js';
import type { ApiKeyService } from './api-key-service.js';
import type { AuthService } from './service.js';

const tags = ['auth'];
const err = ref(ErrorResponse);

/** Login, token refresh and logout, the caller's identity, API keys, and session stream tokens. */
export function authRoutes({ auth: svc, apiKeys: keys }: { auth: AuthService; apiKeys: ApiKeyService }): Route[] {
  return [
    route(
      {
        method: 'POST',
        path: '/v1/auth/login',
        auth: 'none',
        summary: 'Exchange email and password for an access and a refresh token',
        tags,
        schema: { body: ref(LoginRequest), response: { 200: ref(TokenPair), 401: err, 429: err } },
      },
      async ({ body }, { remoteAddress, log }) => {
        return { status: 200, body: await svc.login(body, { ip: remoteAddress, log }) };
      },
    ),
    route(
      {
        method: 'POST',
        path: '/v1/auth/refresh',
        auth: 'none',
        summary: 'Rotate a refresh token into a new token pair (a reused token revokes its family)',
        tags,
        schema: { body: ref(RefreshRequest), response: { 200: ref(TokenPair), 401: err, 429: err } },
      },
      async ({ body }, { remoteAddress, log }) => {
        return { status: 200, body: await svc.refresh(body.refresh_token, { ip: remoteAddress, log }) };
      },
    ),
    route(
      {
        method: 'POST',
        path: '/v1/auth/logout',
        auth: 'user',
        summary: "End the access token's login: its refresh tokens and access tokens stop working (no-op for API keys)",
        tags,
        schema: { response: { 204: null } },
      },
      async (_input, { principal }) => {
        await svc.logout(principal);
        return { status: 204 };
      },
    ),
    route(
      {
        method: 'GET',
        path: '/v1/auth/me',
        auth: 'user',
        summary: 'The calling user and organisation',
        tags,
        schema: { response: { 200: ref(Me) } },
      },
      async (_input, { principal }) => {
        return { status: 200, body: await svc.me(principal) };
      },
    ),
    route(
      {
        method: 'GET',
        path: '/v1/auth/api-keys',
        auth: 'user',
        summary: "List live API keys: the caller's, or the organisation's (admins, scope=org)",
        tags,
        schema: { query: ApiKeyListQuery, response: { 200: ref(ApiKeyList) } },
      },
      async ({ query }, { principal }) => {
        return { status: 200, body: await keys.list(principal, query.scope) };
      },
    ),
    route(
      {
        method: 'POST',
        path: '/v1/auth/api-keys',
        auth: 'user',
        summary: 'Create an API key for the caller; the key is returned once',
        tags,
        schema: { body: ref(ApiKeyCreate), response: { 201: ref(ApiKeyCreated) } },
      },
      async ({ body }, { principal }) => {
        return { status: 201, body: await keys.create(principal, body) };
      },
    ),
    route(
      {
        method: 'DELETE',
        path: '/v1/auth/api-keys/:id',
        auth: 'user',
        summary: 'Revoke an API key (own keys; admins: any key of the organisation)',
        tags,
        schema: { params: IdParams, response: { 204: null, 404: err } },
      },
      async ({ params }, { principal }) => {
        await keys.revoke(principal, params.id);
        return { status: 204 };
      },
    ),
    route(
      {
        method: 'POST',
        path: '/v1/sessions/:id/stream-token',
        auth: 'user',
        summary: "A 5-minute token that opens this session's SSE stream only (for EventSource)",
        tags: ['auth', 'sessions'],
        schema: { params: IdParams, response: { 200: ref(StreamToken), 404: err } },
      },
      async ({ params }, { principal }) => {
        return { status: 200, body: await svc.streamToken(principal, params.id) };
      },
    ),
  ];
}
