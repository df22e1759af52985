import { Type } from '@sinclair/typebox';
import { ProviderParams } from '../../../schemas/connections.js';
import { defineRoutes, type Route } from '../../http/route.js';
import type { Storage } from '../../session-storage/index.js';

const tags = ['connections'];
const err = Type.Ref('ErrorResponse');

/**
 * The caller's connections to code-hosting accounts (spec 2.3). Keys are write-only; each
 * connection becomes the secret `connection:<provider>` of every session the user creates.
 */
export function connectionRoutes({ storage }: { storage: Storage }): Route[] {
  const { connections } = storage;
  const owner = (p: { org_id: string; user_id: string }) => ({ orgId: p.org_id, userId: p.user_id });
  return defineRoutes([
    {
      method: 'GET',
      path: '/v1/user/connections',
      auth: 'user',
      summary: "List the caller's connections (no keys)",
      tags,
      schema: { response: { 200: Type.Ref('ConnectionList') } },
      async handler(_input, { principal }) {
        const data = await connections.list(owner(principal));
        return { status: 200, body: { data, total: data.length } };
      },
    },
    {
      method: 'POST',
      path: '/v1/user/connections',
      auth: 'user',
      summary: 'Create or replace a connection {provider, api_key}',
      tags,
      schema: { body: Type.Ref('CreateConnectionBody'), response: { 200: Type.Ref('Connection'), 201: Type.Ref('Connection') } },
      async handler({ body }, { principal }) {
        const { record, created } = await connections.put(owner(principal), body.provider, body.api_key);
        return { status: created ? 201 : 200, body: record };
      },
    },
    {
      method: 'GET',
      path: '/v1/user/connections/:provider',
      auth: 'user',
      summary: 'One connection (no key)',
      tags,
      schema: { params: ProviderParams, response: { 200: Type.Ref('Connection'), 404: err } },
      async handler({ params }, { principal }) {
        return { status: 200, body: await connections.get(owner(principal), params.provider) };
      },
    },
    {
      method: 'POST',
      path: '/v1/user/connections/:provider',
      auth: 'user',
      summary: 'Create or replace the connection {api_key}',
      tags,
      schema: {
        params: ProviderParams,
        body: Type.Ref('PutConnectionBody'),
        response: { 200: Type.Ref('Connection'), 201: Type.Ref('Connection') },
      },
      async handler({ params, body }, { principal }) {
        const { record, created } = await connections.put(owner(principal), params.provider, body.api_key);
        return { status: created ? 201 : 200, body: record };
      },
    },
    {
      method: 'DELETE',
      path: '/v1/user/connections/:provider',
      auth: 'user',
      summary: 'Delete a connection',
      tags,
      schema: { params: ProviderParams, response: { 204: null, 404: err } },
      async handler({ params }, { principal }) {
        await connections.remove(owner(principal), params.provider);
        return { status: 204 };
      },
    },
  ]);
}
