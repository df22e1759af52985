import { ErrorResponse, IdParams, ref } from '../../../schemas/common.js';
import { CreateSessionBody, ListSessionsQuery, Session, SessionList, UpdateSessionBody } from '../../../schemas/sessions.js';
import { aliasedListReply } from '../../http/index.js';
import { route, type Route } from '../../http/index.js';
import type { SessionService } from './service.js';

const tags = ['sessions'];

/** Spec 4.2: session CRUD and the global chat singleton. */
export function sessionRoutes({ sessions }: { sessions: SessionService }): Route[] {
  return [
    route(
      {
        method: 'POST',
        path: '/v1/sessions',
        auth: 'user',
        summary: 'Create a session',
        tags,
        idempotent: true,
        schema: {
          body: ref(CreateSessionBody),
          response: {
            201: ref(Session),
            404: ref(ErrorResponse),
            409: ref(ErrorResponse),
            422: ref(ErrorResponse),
          },
        },
      },
      async ({ body }, { principal }) => {
        return { status: 201, body: await sessions.create(principal, body) };
      },
    ),
    route(
      {
        method: 'GET',
        path: '/v1/sessions',
        auth: 'user',
        summary: 'List sessions (paginated)',
        tags,
        schema: { query: ListSessionsQuery, response: { 200: ref(SessionList) } },
      },
      async ({ query }, { principal }) => {
        return aliasedListReply(200, await sessions.list(principal, query), 'sessions');
      },
    ),
    route(
      {
        method: 'POST',
        path: '/v1/sessions/chat',
        auth: 'user',
        summary: "The caller's global chat session",
        tags,
        schema: { response: { 200: ref(Session) } },
      },
      async (_input, { principal }) => {
        return { status: 200, body: await sessions.chat(principal) };
      },
    ),
    route(
      {
        method: 'GET',
        path: '/v1/sessions/:id',
        auth: 'user',
        summary: 'Get a session',
        tags,
        schema: { params: IdParams, response: { 200: ref(Session), 404: ref(ErrorResponse) } },
      },
      async ({ params }, { principal }) => {
        return { status: 200, body: await sessions.get(principal, params.id) };
      },
    ),
    route(
      {
        method: 'PATCH',
        path: '/v1/sessions/:id',
        auth: 'user',
        summary: 'Update title, tags or agent',
        tags,
        schema: {
          params: IdParams,
          body: ref(UpdateSessionBody),
          response: { 200: ref(Session), 404: ref(ErrorResponse) },
        },
      },
      async ({ params, body }, { principal }) => {
        return { status: 200, body: await sessions.update(principal, params.id, body) };
      },
    ),
    route(
      {
        method: 'DELETE',
        path: '/v1/sessions/:id',
        auth: 'user',
        summary: 'Delete a session permanently',
        tags,
        schema: { params: IdParams, response: { 204: null, 404: ref(ErrorResponse) } },
      },
      async ({ params }, { principal }) => {
        await sessions.remove(principal, params.id);
        return { status: 204 };
      },
    ),
  ];
}
