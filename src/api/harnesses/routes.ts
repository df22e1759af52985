import { ErrorResponse, IdParams, ref } from '../../../schemas/common.js';
import { Harness, HarnessCreate, HarnessList, HarnessListQuery, HarnessPatch } from '../../../schemas/harnesses.js';
import type { HarnessService } from './service.js';
import { route, type Route } from '../../http/index.js';
import { AGENT_BODY_LIMITS } from '../agents/index.js';

const tags = ['harnesses'];

/** Harnesses: built-in and the organisation's own for everyone; writes for admins. */
export function harnessesRoutes({ harnesses }: { harnesses: HarnessService }): Route[] {
  return [
    route(
      {
        method: 'GET',
        path: '/v1/harnesses',
        auth: 'user',
        summary: 'List built-in and organisation harnesses',
        tags,
        schema: { query: HarnessListQuery, response: { 200: ref(HarnessList) } },
      },
      async ({ query }, { principal }) => {
        return { status: 200, body: await harnesses.list(principal.org_id, query) };
      },
    ),
    route(
      {
        method: 'GET',
        path: '/v1/harnesses/:id',
        auth: 'user',
        summary: 'Get a harness',
        tags,
        schema: { params: IdParams, response: { 200: ref(Harness), 404: ref(ErrorResponse) } },
      },
      async ({ params }, { principal }) => {
        return { status: 200, body: await harnesses.getHarness(principal.org_id, params.id) };
      },
    ),
    route(
      {
        method: 'POST',
        path: '/v1/harnesses',
        auth: 'admin',
        summary: 'Create an organisation harness (admin)',
        tags,
        ...AGENT_BODY_LIMITS,
        schema: { body: ref(HarnessCreate), response: { 201: ref(Harness), 404: ref(ErrorResponse), 422: ref(ErrorResponse) } },
      },
      async ({ body }, { principal }) => {
        return { status: 201, body: await harnesses.create(principal.org_id, body) };
      },
    ),
    route(
      {
        method: 'PATCH',
        path: '/v1/harnesses/:id',
        auth: 'admin',
        summary: 'Update an organisation harness (admin; built-ins are read-only)',
        tags,
        ...AGENT_BODY_LIMITS,
        schema: {
          params: IdParams,
          body: ref(HarnessPatch),
          response: { 200: ref(Harness), 404: ref(ErrorResponse), 422: ref(ErrorResponse) },
        },
      },
      async ({ params, body }, { principal }) => {
        return { status: 200, body: await harnesses.patch(principal.org_id, params.id, body) };
      },
    ),
    route(
      {
        method: 'DELETE',
        path: '/v1/harnesses/:id',
        auth: 'admin',
        summary: 'Archive an organisation harness (admin; built-ins cannot be archived)',
        tags,
        schema: { params: IdParams, response: { 204: null, 404: ref(ErrorResponse) } },
      },
      async ({ params }, { principal }) => {
        await harnesses.archive(principal.org_id, params.id);
        return { status: 204 };
      },
    ),
  ];
}
