import { Type } from '@sinclair/typebox';
import { IdParams } from '../../../schemas/common.js';
import { defineRoutes, type Route } from '../../http/route.js';
import type { AuthModule } from '../../auth/index.js';
import type { Store } from '../../db/index.js';
import { createUserService } from './service.js';

const tags = ['users'];
const err = Type.Ref('ErrorResponse');

/** Users of the caller's organisation: anyone lists and reads, admins create, change and delete. */
export function usersRoutes({ store, auth }: { store: Store; auth: AuthModule }): Route[] {
  const users = createUserService({ store, auth });
  return defineRoutes([
    {
      method: 'GET',
      path: '/v1/users',
      auth: 'user',
      summary: "List the organisation's users",
      tags,
      schema: { response: { 200: Type.Ref('UserList') } },
      async handler(_input, { principal }) {
        return { status: 200, body: await users.list(principal) };
      },
    },
    {
      method: 'POST',
      path: '/v1/users',
      auth: 'admin',
      summary: 'Create a user (member or admin) in the own organisation',
      tags,
      schema: { body: Type.Ref('UserCreate'), response: { 201: Type.Ref('User'), 409: err } },
      async handler({ body }, { principal }) {
        return { status: 201, body: await users.create(principal, body) };
      },
    },
    {
      method: 'GET',
      path: '/v1/users/:id',
      auth: 'user',
      summary: 'Get a user',
      tags,
      schema: { params: IdParams, response: { 200: Type.Ref('User'), 404: err } },
      async handler({ params }, { principal }) {
        return { status: 200, body: await users.get(principal, params.id) };
      },
    },
    {
      method: 'PATCH',
      path: '/v1/users/:id',
      auth: 'admin',
      summary: "Change a user's role, name or password (a new password ends the user's logins)",
      tags,
      schema: { params: IdParams, body: Type.Ref('UserUpdate'), response: { 200: Type.Ref('User'), 404: err, 422: err } },
      async handler({ params, body }, { principal }) {
        return { status: 200, body: await users.update(principal, params.id, body) };
      },
    },
    {
      method: 'DELETE',
      path: '/v1/users/:id',
      auth: 'admin',
      summary: 'Delete a user with their API keys and logins',
      tags,
      schema: { params: IdParams, response: { 204: null, 404: err, 422: err } },
      async handler({ params }, { principal }) {
        await users.remove(principal, params.id);
        return { status: 204 };
      },
    },
  ]);
}
