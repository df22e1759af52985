import { ErrorResponse, IdParams, ref } from '../../../schemas/common.js';
import { route, type Route } from '../../http/index.js';
import type { UserService } from './service.js';
import { User, UserCreate, UserList, UserUpdate } from '../../../schemas/users.js';

const tags = ['users'];
const err = ref(ErrorResponse);

/** Users of the caller's organisation: anyone lists and reads, admins create, change and delete. */
export function usersRoutes({ users }: { users: UserService }): Route[] {
  return [
    route(
      {
        method: 'GET',
        path: '/v1/users',
        auth: 'user',
        summary: "List the organisation's users",
        tags,
        schema: { response: { 200: ref(UserList) } },
      },
      async (_input, { principal }) => {
        return { status: 200, body: await users.list(principal) };
      },
    ),
    route(
      {
        method: 'POST',
        path: '/v1/users',
        auth: 'admin',
        summary: 'Create a user (member or admin) in the own organisation',
        tags,
        schema: { body: ref(UserCreate), response: { 201: ref(User), 409: err } },
      },
      async ({ body }, { principal }) => {
        return { status: 201, body: await users.create(principal, body) };
      },
    ),
    route(
      {
        method: 'GET',
        path: '/v1/users/:id',
        auth: 'user',
        summary: 'Get a user',
        tags,
        schema: { params: IdParams, response: { 200: ref(User), 404: err } },
      },
      async ({ params }, { principal }) => {
        return { status: 200, body: await users.get(principal, params.id) };
      },
    ),
    route(
      {
        method: 'PATCH',
        path: '/v1/users/:id',
        auth: 'admin',
        summary: "Change a user's role, name or password (a new password ends the user's logins)",
        tags,
        schema: { params: IdParams, body: ref(UserUpdate), response: { 200: ref(User), 404: err, 422: err } },
      },
      async ({ params, body }, { principal }) => {
        return { status: 200, body: await users.update(principal, params.id, body) };
      },
    ),
    route(
      {
        method: 'DELETE',
        path: '/v1/users/:id',
        auth: 'admin',
        summary: 'Delete a user with their API keys and logins',
        tags,
        schema: { params: IdParams, response: { 204: null, 404: err, 422: err } },
      },
      async ({ params }, { principal }) => {
        await users.remove(principal, params.id);
        return { status: 204 };
      },
    ),
  ];
}
