import { Type } from '@sinclair/typebox';
import { IdParams } from '../../../schemas/common.js';
import { ApiKeyListQuery } from '../../../schemas/auth.js';
import { defineRoutes, type Route } from '../../http/route.js';
import type { AuthModule } from '../../auth/index.js';
import type { Store } from '../../db/index.js';
import { createApiKeyService } from './api-key-service.js';
import { createAuthService } from './service.js';

const tags = ['auth'];
const err = Type.Ref('ErrorResponse');

/** Login, token refresh and logout, the caller's identity, API keys, and session stream tokens. */
export function authRoutes({ store, auth }: { store: Store; auth: AuthModule }): Route[] {
  const svc = createAuthService({ store, auth });
  const keys = createApiKeyService({ store, principals: auth.principals });
  return defineRoutes([
    {
      method: 'POST',
      path: '/v1/auth/login',
      auth: 'none',
      summary: 'Exchange email and password for an access and a refresh token',
      tags,
      schema: { body: Type.Ref('LoginRequest'), response: { 200: Type.Ref('TokenPair'), 401: err, 429: err } },
      async handler({ body }, { remoteAddress, log }) {
        return { status: 200, body: await svc.login(body, { ip: remoteAddress, log }) };
      },
    },
    {
      method: 'POST',
      path: '/v1/auth/refresh',
      auth: 'none',
      summary: 'Rotate a refresh token into a new token pair (a reused token revokes its family)',
      tags,
      schema: { body: Type.Ref('RefreshRequest'), response: { 200: Type.Ref('TokenPair'), 401: err } },
      async handler({ body }, { log }) {
        return { status: 200, body: await svc.refresh(body.refresh_token, log) };
      },
    },
    {
      method: 'POST',
      path: '/v1/auth/logout',
      auth: 'user',
      summary: "End the access token's login: its refresh tokens and access tokens stop working (no-op for API keys)",
      tags,
      schema: { response: { 204: null } },
      async handler(_input, { principal }) {
        await svc.logout(principal);
        return { status: 204 };
      },
    },
    {
      method: 'GET',
      path: '/v1/auth/me',
      auth: 'user',
      summary: 'The calling user and organisation',
      tags,
      schema: { response: { 200: Type.Ref('Me') } },
      async handler(_input, { principal }) {
        return { status: 200, body: await svc.me(principal) };
      },
    },
    {
      method: 'GET',
      path: '/v1/auth/api-keys',
      auth: 'user',
      summary: "List live API keys: the caller's, or the organisation's (admins, scope=org)",
      tags,
      schema: { query: ApiKeyListQuery, response: { 200: Type.Ref('ApiKeyList') } },
      async handler({ query }, { principal }) {
        return { status: 200, body: await keys.list(principal, query.scope) };
      },
    },
    {
      method: 'POST',
      path: '/v1/auth/api-keys',
      auth: 'user',
      summary: 'Create an API key for the caller; the key is returned once',
      tags,
      schema: { body: Type.Ref('ApiKeyCreate'), response: { 201: Type.Ref('ApiKeyCreated') } },
      async handler({ body }, { principal }) {
        return { status: 201, body: await keys.create(principal, body) };
      },
    },
    {
      method: 'DELETE',
      path: '/v1/auth/api-keys/:id',
      auth: 'user',
      summary: 'Revoke an API key (own keys; admins: any key of the organisation)',
      tags,
      schema: { params: IdParams, response: { 204: null, 404: err } },
      async handler({ params }, { principal }) {
        await keys.revoke(principal, params.id);
        return { status: 204 };
      },
    },
    {
      method: 'POST',
      path: '/v1/sessions/:id/stream-token',
      auth: 'user',
      summary: "A 5-minute token that opens this session's SSE stream only (for EventSource)",
      tags: ['auth', 'sessions'],
      schema: { params: IdParams, response: { 200: Type.Ref('StreamToken'), 404: err } },
      async handler({ params }, { principal }) {
        return { status: 200, body: await svc.streamToken(principal, params.id) };
      },
    },
  ]);
}
