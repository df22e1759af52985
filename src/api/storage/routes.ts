import { ErrorResponse, IdParams, ref } from '../../../schemas/common.js';
import {
  KvEntryList,
  KvKeyParams,
  KvListQuery,
  KvWriteResult,
  PutKvBody,
  PutSecretsBody,
  SecretList,
  SecretNameParams,
} from '../../../schemas/storage.js';
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
        method: 'PUT',
        path: '/v1/sessions/:id/storage/keys/:key',
        auth: 'user',
        summary: 'Set a key/value entry (the key percent-encoded in the path)',
        tags,
        schema: { params: KvKeyParams, body: ref(PutKvBody), response: { 200: ref(KvWriteResult), 404: err, 409: err, 413: err } },
      },
      async ({ params, body }, { principal }) => {
        return { status: 200, body: await sessionStorage.putKey(principal, params.id, params.key, body) };
      },
    ),
    route(
      {
        method: 'DELETE',
        path: '/v1/sessions/:id/storage/keys/:key',
        auth: 'user',
        summary: 'Delete a key/value entry',
        tags,
        schema: { params: KvKeyParams, response: { 204: null, 404: err } },
      },
      async ({ params }, { principal }) => {
        await sessionStorage.deleteKey(principal, params.id, params.key);
        return { status: 204 };
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
    route(
      {
        method: 'DELETE',
        path: '/v1/sessions/:id/storage/secrets/:name',
        auth: 'user',
        summary: 'Delete a secret',
        tags,
        schema: { params: SecretNameParams, response: { 204: null, 404: err } },
      },
      async ({ params }, { principal }) => {
        await sessionStorage.deleteSecret(principal, params.id, params.name);
        return { status: 204 };
      },
    ),
  ];
}
