import { route, type Route } from '../../http/index.js';
import type { OrgService } from './service.js';
import { OrganizationCreate, OrganizationCreated, OrganizationList } from '../../../schemas/orgs.js';
import { ErrorResponse, ref } from '../../../schemas/common.js';

const tags = ['organizations'];

/** Organisations: created by the instance operator; listed (all for the operator, the own for others). */
export function orgsRoutes({ orgs }: { orgs: OrgService }): Route[] {
  return [
    route(
      {
        method: 'POST',
        path: '/v1/orgs',
        auth: 'operator',
        summary: 'Create an organisation with its first admin (instance operator only)',
        tags,
        schema: { body: ref(OrganizationCreate), response: { 201: ref(OrganizationCreated), 409: ref(ErrorResponse) } },
      },
      async ({ body }) => {
        return { status: 201, body: await orgs.create(body) };
      },
    ),
    route(
      {
        method: 'GET',
        path: '/v1/orgs',
        auth: 'user',
        summary: 'List organisations: every one for the operator, the own for others',
        tags,
        schema: { response: { 200: ref(OrganizationList) } },
      },
      async (_input, { principal }) => {
        return { status: 200, body: await orgs.list(principal) };
      },
    ),
  ];
}
