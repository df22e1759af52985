import { ErrorResponse, IdParams, ref } from '../../../schemas/common.js';
import { KvEntryList, KvListQuery, PutSecretsBody, SecretList } from '../../../schemas/storage.js';
import { route, type Route } from '../../http/index.js';
import type { StorageService } from './service.js';

const tags = ['session-storage'];
const err = ref(ErrorResponse);

/** Session key/value entries and secrets (`session_storage`); secret values are write-only. */
export function storageRoutes({ sessionStorage }: { sessionStorage: StorageService }): Route[] {
  return [
    route(
      {
        method: 'GET',
        path: '/v1/sessions/:id/storage/keys',
        auth: 'user',
        summary: 'List key/value entries (a page; values only with include_values=true)',
        tags,
        schema: { params: IdParams, query: KvListQuery, response: { 200: ref(KvEntryList), 404: err } },
      },
      async ({ params, query }, { principal }) => {
        return { status: 200, body: await sessionStorage.keys(principal, params.id, query) };
      },
    ),
    route(
      {
        method: 'GET',
        path: '/v1/sessions/:id/storage/secrets',
        auth: 'user',
        summary: 'List secret names (never values)',
        tags,
        schema: { params: IdParams, response: { 200: ref(SecretList), 404: err } },
      },
      async ({ params }, { principal }) => {
        return { status: 200, body: await sessionStorage.secretNames(principal, params.id) };
      },
    ),
    route(
      {
        method: 'PUT',
        path: '/v1/sessions/:id/storage/secrets',
        auth: 'user',
        summary: 'Create or replace secrets; answers with all names',
        tags,
        schema: { params: IdParams, body: ref(PutSecretsBody), response: { 200: ref(SecretList), 404: err } },
      },
      async ({ params, body }, { principal }) => {
        return { status: 200, body: await sessionStorage.putSecrets(principal, params.id, body) };
      },
    ),
  ];
}
