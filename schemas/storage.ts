import { Type, type Static } from '@sinclair/typebox';
import { ListOf, PageOf, Timestamp, Uuid } from './common.js';

/** Secret names: letters, digits, `_`, `.`, `-` and `:` (for `connection:<provider>`), up to 128. */
export const SECRET_NAME_PATTERN = '^[A-Za-z_][A-Za-z0-9_.:-]{0,127}$';
/** Largest secret value accepted over REST, in characters. */
export const MAX_SECRET_VALUE_LENGTH = 65536;

/** Largest page of `GET …/storage/keys` (and of the kv_store tool's list). */
export const MAX_KV_PAGE = 1000;

export const KvEntry = Type.Object(
  {
    key: Type.String(),
    value: Type.Optional(Type.String({ description: 'Only with include_values=true.' })),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'KvEntry' },
);
export const KvEntryList = PageOf(Type.Ref('KvEntry'), 'KvEntryList');

/** Keys are listed by name; values only when asked, since a page of values can be large. */
export const KvListQuery = Type.Object({
  offset: Type.Integer({ minimum: 0, maximum: 1_000_000_000, default: 0 }),
  limit: Type.Integer({ minimum: 1, maximum: MAX_KV_PAGE, default: 100 }),
  prefix: Type.Optional(Type.String({ maxLength: 256 })),
  include_values: Type.Boolean({ default: false }),
});
export type KvListQueryInput = Static<typeof KvListQuery>;

/** A key as a path segment (percent-encoded); the kv_store tool's limits (no control characters, up to 256). */
export const KvKeyParams = Type.Object({
  id: Uuid,
  key: Type.String({ minLength: 1, maxLength: 256, pattern: '^[^\\u0000-\\u001f\\u007f]+$' }),
});

export const SecretNameParams = Type.Object({ id: Uuid, name: Type.String({ pattern: SECRET_NAME_PATTERN }) });

/** PUT …/storage/keys/{key}: the value, as text (at most 1 MiB in UTF-8; the session's quotas apply). */
export const PutKvBody = Type.Object(
  { value: Type.String({ maxLength: 1024 * 1024, description: 'Text; at most 1 MiB in UTF-8.' }) },
  { $id: 'PutKvBody', additionalProperties: false },
);
export type PutKvInput = Static<typeof PutKvBody>;

/** What a PUT of a key stored. */
export const KvWriteResult = Type.Object(
  { key: Type.String(), size_bytes: Type.Integer({ minimum: 0, description: 'UTF-8 bytes of the value.' }) },
  { $id: 'KvWriteResult', additionalProperties: false },
);

/** A host pattern a secret may be sent to (src/capabilities/secret-hosts.ts; these mirror its constants). */
const SecretHost = Type.String({
  maxLength: 255,
  pattern:
    '^(?:(?:\\*\\.)?[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*|\\[[0-9A-Fa-f:.]{2,45}\\])$',
  description: 'A host name (api.example.com), a wildcard over its subdomains (*.example.org), an IPv4 or a bracketed IPv6 address.',
});
const SecretHosts = Type.Array(SecretHost, {
  maxItems: 32,
  description:
    'Hosts the value may be sent to as {{secret:NAME}} in a fetch_url header; empty: nowhere. Never lifts the private-address check.',
});

/** A secret as listed: the name, its allowed hosts and timestamps, never the value. */
export const SecretInfo = Type.Object(
  { name: Type.String(), allowed_hosts: SecretHosts, created_at: Timestamp, updated_at: Timestamp },
  { $id: 'SecretInfo', additionalProperties: false },
);
export const SecretList = ListOf(Type.Ref('SecretInfo'), 'SecretList');

export const PutSecretsBody = Type.Object(
  {
    secrets: Type.Record(
      Type.String({ pattern: SECRET_NAME_PATTERN }),
      Type.Union([
        Type.String({ maxLength: MAX_SECRET_VALUE_LENGTH }),
        Type.Object(
          { value: Type.String({ maxLength: MAX_SECRET_VALUE_LENGTH }), allowed_hosts: Type.Optional(SecretHosts) },
          { additionalProperties: false },
        ),
      ]),
      {
        minProperties: 1,
        maxProperties: 100,
        additionalProperties: false,
        description:
          "Name → value, or → {value, allowed_hosts}; each is created or replaced. Values are write-only. A plain value keeps a replaced secret's allowed_hosts (a new one has none).",
      },
    ),
  },
  { $id: 'PutSecretsBody', additionalProperties: false },
);

export type PutSecretsInput = Static<typeof PutSecretsBody>;

export const storageSchemas = [KvEntry, KvEntryList, PutKvBody, KvWriteResult, SecretInfo, SecretList, PutSecretsBody];
