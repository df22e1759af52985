import type { Principal } from '../../auth/index.js';
import type { Storage } from '../../session-storage/index.js';
import { normalizeSecretHosts, type SecretWrite } from '../../capabilities/index.js';
import { InvalidRequestError, NotFoundError, PayloadTooLargeError } from '../../errors.js';
import type { KvListQueryInput, PutKvInput, PutSecretsInput } from '../../../schemas/storage.js';

/** The kv_store tool's value limit, over REST too. */
const MAX_KV_VALUE_BYTES = 1024 * 1024;

/** Key/value and secrets of a session over REST; each needs its feature (`key_value`, `secrets`), else 404. */
export function createStorageService({ storage }: { storage: Storage }) {
  async function kvOf(principal: Principal, sessionId: string) {
    return storage.forSession(await storage.access.withFeature(principal, sessionId, 'key_value')).kv;
  }
  async function secretsOf(principal: Principal, sessionId: string) {
    return storage.forSession(await storage.access.withFeature(principal, sessionId, 'secrets')).secrets;
  }

  return {
    async keys(principal: Principal, sessionId: string, { offset, limit, prefix, include_values }: KvListQueryInput) {
      const page = await (await kvOf(principal, sessionId)).list({ offset, limit, include_values, ...(prefix ? { prefix } : {}) });
      return { data: page.entries, total: page.total, offset, limit };
    },

    /** Sets one entry (the store checks the session's entry and byte quotas and the organisation's cap). */
    async putKey(principal: Principal, sessionId: string, key: string, { value }: PutKvInput) {
      const size = Buffer.byteLength(value);
      if (size > MAX_KV_VALUE_BYTES) throw new PayloadTooLargeError(`The value is ${size} bytes; the maximum is ${MAX_KV_VALUE_BYTES}`);
      await (await kvOf(principal, sessionId)).set(key, value);
      return { key, size_bytes: size };
    },

    async deleteKey(principal: Principal, sessionId: string, key: string) {
      if (!(await (await kvOf(principal, sessionId)).delete(key))) throw new NotFoundError('No such key');
    },

    async secretNames(principal: Principal, sessionId: string) {
      const data = await (await secretsOf(principal, sessionId)).list();
      return { data, total: data.length };
    },

    async deleteSecret(principal: Principal, sessionId: string, name: string) {
      if (!(await (await secretsOf(principal, sessionId)).delete(name))) throw new NotFoundError('No such secret');
    },

    async putSecrets(principal: Principal, sessionId: string, input: PutSecretsInput) {
      const secrets = await secretsOf(principal, sessionId);
      await secrets.setMany(Object.fromEntries(Object.entries(input.secrets).map(([name, v]) => [name, secretWrite(v)])));
      const data = await secrets.list();
      return { data, total: data.length };
    },
  };
}

/** A plain value keeps the hosts a replaced secret has; the object form sets them. */
function secretWrite(input: PutSecretsInput['secrets'][string]): SecretWrite {
  if (typeof input === 'string') return { value: input };
  const hosts = input.allowed_hosts === undefined ? undefined : normalizeSecretHosts(input.allowed_hosts);
  if (hosts === null) throw new InvalidRequestError('Invalid request: body.secrets.allowed_hosts holds an invalid host pattern');
  return hosts === undefined ? { value: input.value } : { value: input.value, allowed_hosts: hosts };
}

export type StorageService = ReturnType<typeof createStorageService>;
