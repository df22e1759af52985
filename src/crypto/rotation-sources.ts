import type { Store } from '../db/index.js';
import type { RotationSource } from './rotation.js';
import { createSqlRotationSource } from './sql-rotation-source.js';

/**
 * Every encrypted column of the service, for `npm run rotate-keys`. A resource that stores
 * sealed values adds one `createSqlRotationSource(store, {name, table, blobColumn,
 * purpose})` here (import it from './sql-rotation-source.js'), with the same purpose
 * string it passes to `encryptSecret`.
 */
export function createRotationSources(store: Pick<Store, 'sql'>): RotationSource[] {
  return [
    createSqlRotationSource(store, {
      name: 'llm_providers.api_key',
      table: 'llm_providers',
      blobColumn: 'api_key_encrypted',
      purpose: 'llm_provider.api_key',
      bindingColumns: ['provider_type', 'base_url'],
    }),
    createSqlRotationSource(store, {
      name: 'session_secrets.value',
      table: 'session_secrets',
      blobColumn: 'ciphertext',
      purpose: 'session_secret.value',
    }),
    createSqlRotationSource(store, {
      name: 'user_connections.api_key',
      table: 'user_connections',
      blobColumn: 'ciphertext',
      purpose: 'user_connection.api_key',
    }),
    // Webhook signing secrets (src/webhooks/secrets.ts): the current one and, during a rotation's overlap, the previous.
    createSqlRotationSource(store, {
      name: 'webhook_endpoints.secret',
      table: 'webhook_endpoints',
      blobColumn: 'secret_encrypted',
      purpose: 'webhook_endpoint.secret',
    }),
    createSqlRotationSource(store, {
      name: 'webhook_endpoints.previous_secret',
      table: 'webhook_endpoints',
      blobColumn: 'previous_secret_encrypted',
      purpose: 'webhook_endpoint.previous_secret',
    }),
    // The stored JWT signing key (src/auth/jwt-secret.ts): instance-wide, sealed for org `instance`.
    createSqlRotationSource(store, {
      name: 'auth_secrets.value',
      table: 'auth_secrets',
      idColumn: 'name',
      fixedOrgId: 'instance',
      blobColumn: 'value',
      purpose: 'auth_secret.value',
    }),
  ];
}
