import { ErrorResponse, IdParams, ref } from '../../../schemas/common.js';
import {
  DefaultModel,
  DefaultModelPut,
  LlmModel,
  LlmModelCreate,
  LlmModelList,
  LlmModelListQuery,
  LlmModelPatch,
  SyncModelsResult,
} from '../../../schemas/llm.js';
import type { LlmModelService } from './service.js';
import type { ModelSyncService } from './sync-service.js';
import { route, type Route } from '../../http/index.js';

const tags = ['llm-models'];

/** LLM models: per provider, across providers, sync, and the organisation default. */
export function llmModelsRoutes({ llmModels, modelSync }: { llmModels: LlmModelService; modelSync: ModelSyncService }): Route[] {
  const listModels = (path: string, summary: string) =>
    route(
      { method: 'GET', path, auth: 'user', summary, tags, schema: { query: LlmModelListQuery, response: { 200: ref(LlmModelList) } } },
      async ({ query }, { principal }) => ({ status: 200, body: await llmModels.list(principal.org_id, query) }),
    );
  const getModel = (path: string, summary: string) =>
    route(
      {
        method: 'GET',
        path,
        auth: 'user',
        summary,
        tags,
        schema: { params: IdParams, response: { 200: ref(LlmModel), 404: ref(ErrorResponse) } },
      },
      async ({ params }, { principal }) => ({ status: 200, body: await llmModels.get(principal.org_id, params.id) }),
    );
  return [
    route(
      {
        method: 'GET',
        path: '/v1/llm-providers/:id/models',
        auth: 'user',
        summary: "List a provider's models",
        tags,
        schema: { params: IdParams, response: { 200: ref(LlmModelList), 404: ref(ErrorResponse) } },
      },
      async ({ params }, { principal }) => {
        return { status: 200, body: await llmModels.listForProvider(principal.org_id, params.id) };
      },
    ),
    route(
      {
        method: 'POST',
        path: '/v1/llm-providers/:id/models',
        auth: 'admin',
        summary: 'Add a model to a provider by hand (admin)',
        tags,
        schema: {
          params: IdParams,
          body: ref(LlmModelCreate),
          response: { 201: ref(LlmModel), 404: ref(ErrorResponse), 409: ref(ErrorResponse) },
        },
      },
      async ({ params, body }, { principal }) => {
        return { status: 201, body: await llmModels.create(principal.org_id, params.id, body) };
      },
    ),
    route(
      {
        method: 'POST',
        path: '/v1/llm-providers/:id/sync-models',
        auth: 'admin',
        summary: "Sync a provider's models from the vendor's listing (not_supported for a custom base_url)",
        tags: ['llm-providers'],
        schema: {
          params: IdParams,
          response: { 200: ref(SyncModelsResult), 404: ref(ErrorResponse), 422: ref(ErrorResponse), 503: ref(ErrorResponse) },
        },
      },
      async ({ params }, { principal }) => {
        return { status: 200, body: await modelSync.sync(principal.org_id, params.id) };
      },
    ),
    listModels('/v1/llm-models', "List the organisation's models across providers"),
    // Reference-API aliases (docs/decisions/0049-earlier-api-reads.md): the same listing and read, service and auth.
    listModels('/v1/models', 'Alias of GET /v1/llm-models (models with their provider)'),
    getModel('/v1/models/:id', 'Alias of GET /v1/llm-models/{id}'),
    route(
      {
        method: 'GET',
        path: '/v1/llm-models/default',
        auth: 'user',
        summary: "The organisation's default model and the system default",
        tags,
        schema: { response: { 200: ref(DefaultModel) } },
      },
      async (_input, { principal }) => {
        return { status: 200, body: await llmModels.getDefault(principal.org_id) };
      },
    ),
    route(
      {
        method: 'PUT',
        path: '/v1/llm-models/default',
        auth: 'admin',
        summary: "Set or clear the organisation's default model (admin)",
        tags,
        schema: { body: ref(DefaultModelPut), response: { 200: ref(DefaultModel), 404: ref(ErrorResponse) } },
      },
      async ({ body }, { principal }) => {
        return { status: 200, body: await llmModels.setDefault(principal.org_id, body.model_id) };
      },
    ),
    getModel('/v1/llm-models/:id', 'Get a model'),
    route(
      {
        method: 'PATCH',
        path: '/v1/llm-models/:id',
        auth: 'admin',
        summary: "Update a model's display name, capabilities or enabled flag (admin)",
        tags,
        schema: { params: IdParams, body: ref(LlmModelPatch), response: { 200: ref(LlmModel), 404: ref(ErrorResponse) } },
      },
      async ({ params, body }, { principal }) => {
        return { status: 200, body: await llmModels.patch(principal.org_id, params.id, body) };
      },
    ),
    route(
      {
        method: 'DELETE',
        path: '/v1/llm-models/:id',
        auth: 'admin',
        summary: 'Delete a model (admin; 409 while it is a default)',
        tags,
        schema: { params: IdParams, response: { 204: null, 404: ref(ErrorResponse), 409: ref(ErrorResponse) } },
      },
      async ({ params }, { principal }) => {
        await llmModels.remove(principal.org_id, params.id);
        return { status: 204 };
      },
    ),
  ];
}
