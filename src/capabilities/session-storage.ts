import { Type } from '@sinclair/typebox';
import { StringEnum, defineCapability, defineTool, jsonResult } from './define.js';
import { MAX_SECRET_HOSTS, normalizeSecretHosts } from './secret-hosts.js';
import { CONNECTION_SECRET_PREFIX, DEFAULT_KV_LIST_LIMIT, MAX_KV_LIST_LIMIT } from './storage-ports.js';
import { ToolError } from './types.js';

export const SESSION_STORAGE_ID = 'session_storage';
export const MAX_KV_KEY_LENGTH = 256;
export const MAX_KV_VALUE_BYTES = 1024 * 1024;
export const MAX_SECRET_VALUE_BYTES = 64 * 1024;
/** Secret names look like environment variables: `GITHUB_TOKEN`, `api.key-2`. */
/** Secret names; `:` allows the injected `connection:<provider>` secrets (spec 2.3). */
export const SECRET_NAME_RE = /^[A-Za-z_][A-Za-z0-9_.:-]{0,127}$/;
const OPERATIONS = ['set', 'get', 'delete', 'list'] as const;

const kvStore = defineTool({
  name: 'kv_store',
  display_name: 'Key-Value Store',
  description: `Persistent key/value storage of this session (survives across turns). operation: set (key, value), get (key), delete (key), list (optional prefix, limit up to ${MAX_KV_LIST_LIMIT} (default ${DEFAULT_KV_LIST_LIMIT}), offset; returns keys only).`,
  parameters: Type.Object(
    {
      operation: StringEnum(OPERATIONS, { description: 'set, get, delete or list.' }),
      key: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_KV_KEY_LENGTH, description: 'The key (set, get, delete).' })),
      value: Type.Optional(Type.String({ description: 'The value to store (set). Store JSON as a string.' })),
      prefix: Type.Optional(Type.String({ description: 'Only keys starting with this (list).' })),
      limit: Type.Optional(
        Type.Integer({ minimum: 1, maximum: MAX_KV_LIST_LIMIT, description: `Keys per page (list; default ${DEFAULT_KV_LIST_LIMIT}).` }),
      ),
      offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000_000, description: 'Keys to skip (list; default 0).' })),
    },
    { additionalProperties: false },
  ),
  async run(args, { kv }) {
    if (args.operation === 'list') {
      const limit = args.limit ?? DEFAULT_KV_LIST_LIMIT;
      const offset = args.offset ?? 0;
      const page = await kv.list({ ...(args.prefix ? { prefix: args.prefix } : {}), limit, offset });
      return jsonResult({ keys: page.entries.map((e) => ({ key: e.key, updated_at: e.updated_at })), total: page.total, offset, limit });
    }
    const key = required(args.key, 'key', args.operation);
    checkKey(key);
    if (args.operation === 'get') {
      const value = await kv.get(key);
      return jsonResult({ key, found: value !== null, value });
    }
    if (args.operation === 'delete') return jsonResult({ key, deleted: await kv.delete(key) });
    const value = required(args.value, 'value', 'set');
    checkSize(value, MAX_KV_VALUE_BYTES, 'value');
    await kv.set(key, value);
    return jsonResult({ key, stored: true, size_bytes: Buffer.byteLength(value) });
  },
});

const secretStore = defineTool({
  name: 'secret_store',
  display_name: 'Secret Store',
  description:
    'Encrypted secret storage of this session (API keys, tokens). Values never come back out: use a secret by reference, e.g. a fetch_url header `Authorization: Bearer {{secret:NAME}}`; it is sent only to the hosts in its allowed_hosts. operation: set (name, value, allowed_hosts), get (name; tells whether it exists, not its value), delete (name), list (names only).',
  parameters: Type.Object(
    {
      operation: StringEnum(OPERATIONS, { description: 'set, get, delete or list.' }),
      name: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'Secret name, e.g. GITHUB_TOKEN (set, get, delete).' })),
      value: Type.Optional(Type.String({ description: 'The secret value (set).' })),
      allowed_hosts: Type.Optional(
        Type.Array(Type.String({ minLength: 1, maxLength: 255 }), {
          maxItems: MAX_SECRET_HOSTS,
          description:
            'Hosts the value may be sent to (set), e.g. ["api.example.com", "*.example.org"]. Omitted: a replaced secret keeps its hosts, a new one has none (it cannot be sent anywhere).',
        }),
      ),
    },
    { additionalProperties: false },
  ),
  async run(args, { secrets }) {
    if (args.operation === 'list') {
      const names = await secrets.list();
      return jsonResult({
        secrets: names.map((s) => ({ name: s.name, allowed_hosts: s.allowed_hosts, updated_at: s.updated_at })),
        total: names.length,
      });
    }
    const name = required(args.name, 'name', args.operation);
    if (!SECRET_NAME_RE.test(name)) {
      throw new ToolError('Invalid secret name: use letters, digits, "_", "." or "-", starting with a letter or "_" (max 128).');
    }
    if (args.operation === 'get') {
      // Existence and timestamps only: a value in a tool result would reach the transcript and the LLM.
      const info = (await secrets.list()).find((s) => s.name === name);
      return jsonResult({
        name,
        found: info !== undefined,
        ...(info ? { allowed_hosts: info.allowed_hosts, created_at: info.created_at, updated_at: info.updated_at } : {}),
        use_as: `{{secret:${name}}}`,
      });
    }
    if (name.startsWith(CONNECTION_SECRET_PREFIX))
      throw new ToolError(`Names starting with "${CONNECTION_SECRET_PREFIX}" belong to the user's connections and cannot be changed here.`);
    if (args.operation === 'delete') return jsonResult({ name, deleted: await secrets.delete(name) });
    const value = required(args.value, 'value', 'set');
    checkSize(value, MAX_SECRET_VALUE_BYTES, 'value');
    const hosts = args.allowed_hosts === undefined ? undefined : normalizeSecretHosts(args.allowed_hosts);
    if (hosts === null) throw new ToolError('Invalid allowed_hosts: use host names such as "api.example.com" or "*.example.org".');
    await secrets.set(name, hosts === undefined ? { value } : { value, allowed_hosts: hosts });
    return jsonResult({ name, stored: true });
  },
});

function required(value: string | undefined, field: string, operation: string): string {
  if (value === undefined) throw new ToolError(`"${field}" is required for operation "${operation}".`);
  return value;
}

function checkKey(key: string): void {
  if (/[\u0000-\u001f\u007f]/.test(key)) throw new ToolError('Keys must not contain control characters.');
}

function checkSize(value: string, max: number, field: string): void {
  const size = Buffer.byteLength(value);
  if (size > max) throw new ToolError(`"${field}" is ${size} bytes; the maximum is ${max}.`);
}

export const sessionStorageCapability = defineCapability({
  id: SESSION_STORAGE_ID,
  name: 'Session Storage',
  description: 'Persistent key/value storage and encrypted secrets, scoped to the session.',
  prompt: [
    'This session has persistent storage that survives across turns:',
    '`kv_store` for notes, state and intermediate results (values are strings; store JSON as text),',
    'and `secret_store` for credentials such as API keys.',
    'Secret values are never shown to you; use them by reference with `{{secret:NAME}}` where a tool accepts it (fetch_url headers).',
  ].join(' '),
  tools: [kvStore, secretStore],
  configSchema: Type.Object({}, { additionalProperties: false }),
  features: ['key_value', 'secrets'],
});
