import { Type } from '@sinclair/typebox';
import { defineRoutes, type Route } from '../../http/route.js';
import type { AuthModule } from '../../auth/index.js';
import type { Store } from '../../db/index.js';
import { createOrgService } from './service.js';

const tags = ['organizations'];

/** Organisations: created by the instance operator; listed (all for the operator, the own for others). */
export function orgsRoutes({ store, auth }: { store: Store; auth: AuthModule }): Route[] {
  const orgs = createOrgService({ store, auth });
  return defineRoutes([
    {
      method: 'POST',
      path: '/v1/orgs',
      auth: 'operator',
      summary: 'Create an organisation with its first admin (instance operator only)',
      tags,
      schema: { body: Type.Ref('OrganizationCreate'), response: { 201: Type.Ref('OrganizationCreated'), 409: Type.Ref('ErrorResponse') } },
      async handler({ body }) {
        return { status: 201, body: await orgs.create(body) };
      },
    },
    {
      method: 'GET',
      path: '/v1/orgs',
      auth: 'user',
      summary: 'List organisations: every one for the operator, the own for others',
      tags,
      schema: { response: { 200: Type.Ref('OrganizationList') } },
      async handler(_input, { principal }) {
        return { status: 200, body: await orgs.list(principal) };
      },
    },
  ]);
}
