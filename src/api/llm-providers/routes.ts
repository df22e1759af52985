import { ErrorResponse, IdParams, ref } from '../../../schemas/common.js';
import { LlmProvider, LlmProviderCreate, LlmProviderList, LlmProviderPatch } from '../../../schemas/llm.js';
import type { LlmProviderService } from './service.js';
import { route, type Route } from '../../http/index.js';

const tags = ['llm-providers'];

/**
 * LLM providers (spec 4.4): organisation infrastructure holding the organisation's keys, so
 * every user reads them and only admins create, change and delete them
 * (docs/decisions/0018-member-admin-matrix.md).
 */
export function llmProvidersRoutes({ llmProviders }: { llmProviders: LlmProviderService }): Route[] {
  return [
    route(
      {
        method: 'POST',
        path: '/v1/llm-providers',
        auth: 'admin',
        summary: 'Create an LLM provider (admin; the key is encrypted and never returned)',
        tags,
        schema: { body: ref(LlmProviderCreate), response: { 201: ref(LlmProvider), 400: ref(ErrorResponse) } },
      },
      async ({ body }, { principal }) => {
        return { status: 201, body: await llmProviders.create(principal.org_id, body) };
      },
    ),
    route(
      {
        method: 'GET',
        path: '/v1/llm-providers',
        auth: 'user',
        summary: "List the organisation's LLM providers",
        tags,
        schema: { response: { 200: ref(LlmProviderList) } },
      },
      async (_input, { principal }) => {
        return { status: 200, body: await llmProviders.list(principal.org_id) };
      },
    ),
    route(
      {
        method: 'GET',
        path: '/v1/llm-providers/:id',
        auth: 'user',
        summary: 'Get an LLM provider',
        tags,
        schema: { params: IdParams, response: { 200: ref(LlmProvider), 404: ref(ErrorResponse) } },
      },
      async ({ params }, { principal }) => {
        return { status: 200, body: await llmProviders.get(principal.org_id, params.id) };
      },
    ),
    route(
      {
        method: 'PATCH',
        path: '/v1/llm-providers/:id',
        auth: 'admin',
        summary: 'Update an LLM provider (admin; a new base_url or provider_type needs a new api_key in the same request)',
        tags,
        schema: { params: IdParams, body: ref(LlmProviderPatch), response: { 200: ref(LlmProvider), 404: ref(ErrorResponse) } },
      },
      async ({ params, body }, { principal }) => {
        return { status: 200, body: await llmProviders.patch(principal.org_id, params.id, body) };
      },
    ),
    route(
      {
        method: 'DELETE',
        path: '/v1/llm-providers/:id',
        auth: 'admin',
        summary: 'Delete an LLM provider and its models (admin; 409 while one of its models is a default)',
        tags,
        schema: { params: IdParams, response: { 204: null, 404: ref(ErrorResponse), 409: ref(ErrorResponse) } },
      },
      async ({ params }, { principal }) => {
        await llmProviders.remove(principal.org_id, params.id);
        return { status: 204 };
      },
    ),
  ];
}
