import { Type } from '@sinclair/typebox';
import { IdParams } from '../../../schemas/common.js';
import { ListSessionsQuery } from '../../../schemas/sessions.js';
import { aliasedListReply } from '../../http/aliased-list.js';
import { defineRoutes, type Route } from '../../http/route.js';
import type { SessionService } from './service.js';

const tags = ['sessions'];

/** Spec 4.2: session CRUD and the global chat singleton. */
export function sessionRoutes({ sessions }: { sessions: SessionService }): Route[] {
  return defineRoutes([
    {
      method: 'POST',
      path: '/v1/sessions',
      auth: 'user',
      summary: 'Create a session',
      tags,
      idempotent: true,
      schema: {
        body: Type.Ref('CreateSessionBody'),
        response: {
          201: Type.Ref('Session'),
          404: Type.Ref('ErrorResponse'),
          409: Type.Ref('ErrorResponse'),
          422: Type.Ref('ErrorResponse'),
        },
      },
      async handler({ body }, { principal }) {
        return { status: 201, body: await sessions.create(principal, body) };
      },
    },
    {
      method: 'GET',
      path: '/v1/sessions',
      auth: 'user',
      summary: 'List sessions (paginated)',
      tags,
      schema: { query: ListSessionsQuery, response: { 200: Type.Ref('SessionList') } },
      async handler({ query }, { principal }) {
        return aliasedListReply(200, await sessions.list(principal, query), 'sessions');
      },
    },
    {
      method: 'POST',
      path: '/v1/sessions/chat',
      auth: 'user',
      summary: "The caller's global chat session",
      tags,
      schema: { response: { 200: Type.Ref('Session') } },
      async handler(_input, { principal }) {
        return { status: 200, body: await sessions.chat(principal) };
      },
    },
    {
      method: 'GET',
      path: '/v1/sessions/:id',
      auth: 'user',
      summary: 'Get a session',
      tags,
      schema: { params: IdParams, response: { 200: Type.Ref('Session'), 404: Type.Ref('ErrorResponse') } },
      async handler({ params }, { principal }) {
        return { status: 200, body: await sessions.get(principal, params.id) };
      },
    },
    {
      method: 'PATCH',
      path: '/v1/sessions/:id',
      auth: 'user',
      summary: 'Update title, tags or agent',
      tags,
      schema: {
        params: IdParams,
        body: Type.Ref('UpdateSessionBody'),
        response: { 200: Type.Ref('Session'), 404: Type.Ref('ErrorResponse') },
      },
      async handler({ params, body }, { principal }) {
        return { status: 200, body: await sessions.update(principal, params.id, body) };
      },
    },
    {
      method: 'DELETE',
      path: '/v1/sessions/:id',
      auth: 'user',
      summary: 'Delete a session permanently',
      tags,
      schema: { params: IdParams, response: { 204: null, 404: Type.Ref('ErrorResponse') } },
      async handler({ params }, { principal }) {
        await sessions.remove(principal, params.id);
        return { status: 204 };
      },
    },
  ]);
}
