import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  aadBinding,
  createKeyring,
  createRotationSources,
  decryptSecret,
  DecryptionError,
  envelopeKeyId,
  rotateSecrets,
} from '../../../src/crypto/index.js';
import { LLM_PROVIDER_KEY_PURPOSE } from '../../../src/api/llm-providers/index.js';
import { LlmError } from '../../../src/llm/index.js';
import { startTestApp, type TestApp } from '../../helpers/app.js';
import { adminOrgId, createOtherOrg, createProvider, fakeVendorKey, useSuiteApp } from './helpers.js';

const keySpec = (kid: string) => `${kid}:${randomBytes(32).toString('base64')}`;

async function sealedKey(app: TestApp, providerId: string): Promise<string> {
  const [row] = await app.app.services.store.sql<{ k: string }>('select api_key_encrypted as k from llm_providers where id = ?', [
    providerId,
  ]);
  return row!.k;
}

describe('llm providers: keys at rest (postgres)', () => {
  const app = useSuiteApp();

  it('the stored key is an envelope bound to the organisation, the provider row, its type and base URL', async () => {
    assert.deepEqual(
      (await app().request('GET', '/v1/llm-providers')).body,
      { data: [], total: 0 },
      'no vendor key in the environment, no provider',
    );
    const apiKey = fakeVendorKey();
    const p = await createProvider(app(), { api_key: apiKey });
    const blob = await sealedKey(app(), p['id']);
    assert.ok(!blob.includes(apiKey));
    assert.equal(JSON.parse(blob).v, 1);
    const orgId = await adminOrgId(app());
    const { keyring } = app().app.services;
    const binding = aadBinding(['llmsim', null]);
    assert.equal(decryptSecret(keyring, blob, { org_id: orgId, row_id: p['id'], purpose: LLM_PROVIDER_KEY_PURPOSE, binding }), apiKey);
    assert.throws(
      () => decryptSecret(keyring, blob, { org_id: orgId, row_id: p['id'], purpose: 'session_secret.value', binding }),
      DecryptionError,
    );
    assert.throws(
      () => decryptSecret(keyring, blob, { org_id: orgId, row_id: p['id'], purpose: LLM_PROVIDER_KEY_PURPOSE }),
      DecryptionError,
      'unbound AAD',
    );
    for (const other of [aadBinding(['openai', null]), aadBinding(['llmsim', 'https://attacker.example/v1'])]) {
      assert.throws(
        () => decryptSecret(keyring, blob, { org_id: orgId, row_id: p['id'], purpose: LLM_PROVIDER_KEY_PURPOSE, binding: other }),
        DecryptionError,
      );
    }
  });

  it('a ciphertext copied to another provider row (same or other organisation) fails to decrypt', async () => {
    const source = await createProvider(app(), { api_key: fakeVendorKey() });
    const sameOrg = await createProvider(app(), { api_key: fakeVendorKey() });
    const other = await createOtherOrg(app());
    const foreign = await other.request('POST', '/v1/llm-providers', {
      body: { name: 'F', provider_type: 'llmsim', api_key: fakeVendorKey() },
    });
    assert.equal(foreign.status, 201);
    const { store, keyring } = app().app.services;
    const { modelResolver } = app().app.modules.llmModels;
    const blob = await sealedKey(app(), source['id']);
    for (const target of [sameOrg['id'], foreign.body.id]) {
      await store.sql('update llm_providers set api_key_encrypted = ? where id = ?', [blob, target]);
    }
    const orgId = await adminOrgId(app());
    assert.throws(
      () =>
        decryptSecret(keyring, blob, {
          org_id: orgId,
          row_id: sameOrg['id'],
          purpose: LLM_PROVIDER_KEY_PURPOSE,
          binding: aadBinding(['llmsim', null]),
        }),
      (err: unknown) => err instanceof DecryptionError && err.reason === 'authentication_failed',
    );
    assert.throws(
      () => decryptSecret(keyring, blob, { org_id: other.orgId, row_id: foreign.body.id, purpose: LLM_PROVIDER_KEY_PURPOSE }),
      DecryptionError,
    );

    // Through the API: sync of the tampered row is refused, the source row still works.
    const refused = await app().request('POST', `/v1/llm-providers/${sameOrg['id']}/sync-models`);
    assert.equal(refused.status, 422, refused.text);
    assert.match(refused.body.error, /cannot be decrypted/);
    assert.equal((await other.request('POST', `/v1/llm-providers/${foreign.body.id}/sync-models`)).status, 422);
    const ok = await app().request('POST', `/v1/llm-providers/${source['id']}/sync-models`);
    assert.deepEqual(ok.body, { status: 'success', created: 1, updated: 0, stale: 0 });

    // And for a turn: the resolver refuses with a non-retryable credentials error.
    const m = await app().request('POST', `/v1/llm-providers/${sameOrg['id']}/models`, { body: { model_id: 'llmsim' } });
    await assert.rejects(
      modelResolver.resolve(orgId, m.body.id),
      (err: unknown) => err instanceof LlmError && err.kind === 'auth' && !err.retryable,
    );
    assert.ok(app().logs.some((l) => l.includes('llm provider key cannot be decrypted')));
  });

  it('the rotation sources include provider keys with the purpose and binding the service seals with', async () => {
    const p = await createProvider(app(), { provider_type: 'openai_completions', base_url: 'http://127.0.0.1:9/v1' });
    const sources = createRotationSources(app().app.services.store);
    const source = sources.find((s) => s.name === 'llm_providers.api_key');
    assert.ok(source, 'a rotation source for llm_providers');
    const rows = [];
    for await (const row of source.readAll()) rows.push(row);
    const mine = rows.find((r) => r.row_id === p['id']);
    assert.equal(mine?.purpose, LLM_PROVIDER_KEY_PURPOSE);
    assert.equal(mine?.binding, aadBinding(['openai_completions', 'http://127.0.0.1:9/v1']));
    assert.equal(mine?.org_id, await adminOrgId(app()));
    assert.equal(decryptSecret(app().app.services.keyring, mine.blob, mine).length > 0, true, 'the source row opens the value');
  });
});

describe('llm providers: key rotation (postgres)', () => {
  it('rotate-keys re-wraps provider keys; afterwards the new key alone opens them', async (t) => {
    const k1 = keySpec('kek-1');
    const k2 = keySpec('kek-2');
    const apiKey = fakeVendorKey();
    const first = await startTestApp(t, { env: { SECRETS_ENCRYPTION_KEY: k1 } });
    const p = await createProvider(first, { api_key: apiKey });
    assert.equal(envelopeKeyId(await sealedKey(first, p['id'])), 'kek-1');
    await first.app.close();

    // An instance with only the new key cannot open the old values yet: it refuses to start,
    // naming the setting (the JWT signing key is sealed with the same keyring).
    await assert.rejects(
      startTestApp(t, { databaseUrl: first.databaseUrl, env: { SECRETS_ENCRYPTION_KEY: k2 } }),
      /cannot be opened \(unknown_key\): set SECRETS_ENCRYPTION_KEY/,
    );

    // During rotation: new key current, old key previous; the rotation command's sources re-wrap.
    const during = await startTestApp(t, {
      databaseUrl: first.databaseUrl,
      env: { SECRETS_ENCRYPTION_KEY: k2, SECRETS_ENCRYPTION_KEY_PREVIOUS: k1 },
    });
    const reports = await rotateSecrets(createKeyring({ current: k2, previous: k1 }), createRotationSources(during.app.services.store));
    const report = reports.find((r) => r.source === 'llm_providers.api_key')!;
    assert.deepEqual({ rewrapped: report.rewrapped, failed: report.failed }, { rewrapped: 1, failed: [] });
    assert.equal(envelopeKeyId(await sealedKey(during, p['id'])), 'kek-2');
    const again = await rotateSecrets(createKeyring({ current: k2, previous: k1 }), createRotationSources(during.app.services.store));
    assert.equal(again.find((r) => r.source === 'llm_providers.api_key')!.current, 1);
    await during.app.close();

    const after = await startTestApp(t, { databaseUrl: first.databaseUrl, env: { SECRETS_ENCRYPTION_KEY: k2 } });
    const row = await after.app.modules.llmProviders.service.getRow(await adminOrgId(after), p['id']);
    assert.equal(after.app.modules.llmProviders.service.openConfig(row).api_key, apiKey);
    assert.deepEqual((await after.request('POST', `/v1/llm-providers/${p['id']}/sync-models`)).body, {
      status: 'success',
      created: 1,
      updated: 0,
      stale: 0,
    });
  });
});

describe('llm providers: from the environment at first start (postgres)', () => {
  it('OPENAI_API_KEY and ANTHROPIC_API_KEY create providers in the bootstrap organisation, once', async (t) => {
    const env = { OPENAI_API_KEY: fakeVendorKey('sk-env-openai'), ANTHROPIC_API_KEY: fakeVendorKey('sk-env-anthropic') };
    const first = await startTestApp(t, { env });
    const list = await first.request('GET', '/v1/llm-providers');
    assert.deepEqual(
      list.body.data.map((p: any) => [p.name, p.provider_type, p.api_key_set, p.base_url]),
      [
        ['OpenAI', 'openai', true, null],
        ['Anthropic', 'anthropic', true, null],
      ],
    );
    const orgId = await adminOrgId(first);
    const opened = await Promise.all(
      list.body.data.map(
        async (p: any) =>
          first.app.modules.llmProviders.service.openConfig(await first.app.modules.llmProviders.service.getRow(orgId, p.id)).api_key,
      ),
    );
    assert.deepEqual(opened, [env.OPENAI_API_KEY, env.ANTHROPIC_API_KEY]);
    assert.equal((await first.request('DELETE', `/v1/llm-providers/${list.body.data[1].id}`)).status, 204);
    await first.app.close();
    for (const secret of Object.values(env)) assert.ok(!first.logs.join('').includes(secret), 'env key logged');

    const second = await startTestApp(t, { databaseUrl: first.databaseUrl, env: { ...env, GEMINI_API_KEY: fakeVendorKey() } });
    const after = await second.request('GET', '/v1/llm-providers');
    assert.deepEqual(
      after.body.data.map((p: any) => p.name),
      ['OpenAI'],
      'not created again, deleted one not restored',
    );
  });
});
