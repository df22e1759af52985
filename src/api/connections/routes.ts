import { Connection, ConnectionList, CreateConnectionBody, ProviderParams, PutConnectionBody } from '../../../schemas/connections.js';
import { route, type Route } from '../../http/index.js';
import type { Storage } from '../../session-storage/index.js';
import { ErrorResponse, ref } from '../../../schemas/common.js';

const tags = ['connections'];
const err = ref(ErrorResponse);

/**
 * The caller's connections to code-hosting accounts (spec 2.3). Keys are write-only; each
 * connection becomes the secret `connection:<provider>` of every session the user creates.
 */
export function connectionRoutes({ connections }: { connections: Storage['connections'] }): Route[] {
  const owner = (p: { org_id: string; user_id: string }) => ({ orgId: p.org_id, userId: p.user_id });
  return [
    route(
      {
        method: 'GET',
        path: '/v1/user/connections',
        auth: 'user',
        summary: "List the caller's connections (no keys)",
        tags,
        schema: { response: { 200: ref(ConnectionList) } },
      },
      async (_input, { principal }) => {
        const data = await connections.list(owner(principal));
        return { status: 200, body: { data, total: data.length } };
      },
    ),
    route(
      {
        method: 'POST',
        path: '/v1/user/connections',
        auth: 'user',
        summary: 'Create or replace a connection {provider, api_key}',
        tags,
        schema: { body: ref(CreateConnectionBody), response: { 200: ref(Connection), 201: ref(Connection) } },
      },
      async ({ body }, { principal }) => {
        const { record, created } = await connections.put(owner(principal), body.provider, body.api_key);
        return created ? { status: 201, body: record } : { status: 200, body: record };
      },
    ),
    route(
      {
        method: 'GET',
        path: '/v1/user/connections/:provider',
        auth: 'user',
        summary: 'One connection (no key)',
        tags,
        schema: { params: ProviderParams, response: { 200: ref(Connection), 404: err } },
      },
      async ({ params }, { principal }) => {
        return { status: 200, body: await connections.get(owner(principal), params.provider) };
      },
    ),
    route(
      {
        method: 'POST',
        path: '/v1/user/connections/:provider',
        auth: 'user',
        summary: 'Create or replace the connection {api_key}',
        tags,
        schema: {
          params: ProviderParams,
          body: ref(PutConnectionBody),
          response: { 200: ref(Connection), 201: ref(Connection) },
        },
      },
      async ({ params, body }, { principal }) => {
        const { record, created } = await connections.put(owner(principal), params.provider, body.api_key);
        return created ? { status: 201, body: record } : { status: 200, body: record };
      },
    ),
    route(
      {
        method: 'DELETE',
        path: '/v1/user/connections/:provider',
        auth: 'user',
        summary: 'Delete a connection',
        tags,
        schema: { params: ProviderParams, response: { 204: null, 404: err } },
      },
      async ({ params }, { principal }) => {
        await connections.remove(owner(principal), params.provider);
        return { status: 204 };
      },
    ),
  ];
}
