import { Type, type Static } from '@sinclair/typebox';
import { ListOf, Timestamp } from './common.js';

export const PROVIDER_PATTERN = '^[a-z0-9][a-z0-9_.-]{0,63}$';
const ApiKey = Type.String({ minLength: 1, maxLength: 8192, description: 'Write-only; encrypted at rest, never returned.' });

/** A user's connection to a code-hosting account; the key is never shown. */
export const Connection = Type.Object(
  { provider: Type.String({ pattern: PROVIDER_PATTERN }), created_at: Timestamp, updated_at: Timestamp },
  { $id: 'Connection', additionalProperties: false },
);
export const ConnectionList = ListOf(Type.Ref('Connection'), 'ConnectionList');

export const PutConnectionBody = Type.Object({ api_key: ApiKey }, { $id: 'PutConnectionBody', additionalProperties: false });
export const CreateConnectionBody = Type.Object(
  { provider: Type.String({ pattern: PROVIDER_PATTERN }), api_key: ApiKey },
  { $id: 'CreateConnectionBody', additionalProperties: false },
);

export const ProviderParams = Type.Object({ provider: Type.String({ pattern: PROVIDER_PATTERN }) });

export type CreateConnectionInput = Static<typeof CreateConnectionBody>;

export const connectionSchemas = [Connection, ConnectionList, PutConnectionBody, CreateConnectionBody];
