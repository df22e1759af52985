import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { aadBinding, decryptSecret, DecryptionError, encryptSecret } from '../../../src/crypto/index.js';
import { LLM_PROVIDER_KEY_PURPOSE } from '../../../src/api/llm-providers/index.js';
import { startTestApp, TEST_SECRETS_KEY } from '../../helpers/app.js';
import { adminOrgId, createCaller, createProvider, fakeVendorKey, useSuiteApp } from './helpers.js';

/**
 * A provider key may only go where it was set for: a new base_url or provider_type needs an
 * admin and a new key in the same request, the sealed key is bound to type and URL, and
 * base URLs on private addresses need the operator's LLM_PROVIDER_ALLOWED_PRIVATE_HOSTS.
 */
describe('llm providers: a key stays with its destination (postgres)', () => {
  const app = useSuiteApp();
  const LOCAL = 'http://127.0.0.1:9/v1';

  it('PATCH base_url or provider_type without a new api_key - 400, nothing changes', async () => {
    const key = fakeVendorKey();
    const p = await createProvider(app(), { provider_type: 'openai_completions', base_url: LOCAL, api_key: key });
    for (const body of [
      { base_url: 'http://localhost:9/v1' },
      { base_url: null },
      { provider_type: 'openai' },
      { provider_type: 'openai', name: 'x' },
    ]) {
      const r = await app().request('PATCH', `/v1/llm-providers/${p['id']}`, { body });
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.match(r.body.error, /changing base_url or provider_type needs a new api_key/);
    }
    const after = await app().request('GET', `/v1/llm-providers/${p['id']}`);
    assert.deepEqual(
      [after.body.name, after.body.provider_type, after.body.base_url, after.body.updated_at],
      ['P', 'openai_completions', LOCAL, p['updated_at']],
    );
    const llmProviders = app().app.modules.llmProviders.service;
    assert.equal(llmProviders.openConfig(await llmProviders.getRow(await adminOrgId(app()), p['id'])).api_key, key);
    // The same URL again is not a change; the trailing slash is normalised away.
    assert.equal(
      (await app().request('PATCH', `/v1/llm-providers/${p['id']}`, { body: { base_url: `${LOCAL}/`, name: 'Same' } })).status,
      200,
    );
  });

  it('PATCH base_url and provider_type with a new api_key - 200; the new key is sealed for the new destination', async () => {
    const p = await createProvider(app(), { provider_type: 'openai_completions', base_url: LOCAL });
    const newKey = fakeVendorKey();
    const r = await app().request('PATCH', `/v1/llm-providers/${p['id']}`, {
      body: { provider_type: 'anthropic', base_url: 'http://localhost:9', api_key: newKey },
    });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual([r.body.provider_type, r.body.base_url], ['anthropic', 'http://localhost:9']);
    const orgId = await adminOrgId(app());
    const [row] = await app().app.services.store.sql<{ k: string }>('select api_key_encrypted as k from llm_providers where id = ?', [
      p['id'],
    ]);
    const aad = { org_id: orgId, row_id: p['id'], purpose: LLM_PROVIDER_KEY_PURPOSE };
    const { keyring } = app().app.services;
    assert.equal(decryptSecret(keyring, row!.k, { ...aad, binding: aadBinding(['anthropic', 'http://localhost:9']) }), newKey);
    assert.throws(() => decryptSecret(keyring, row!.k, { ...aad, binding: aadBinding(['openai_completions', LOCAL]) }), DecryptionError);
  });

  it('a base_url changed behind the API (in the database) makes the key unusable: it is never sent to the new host', async () => {
    const p = await createProvider(app(), { provider_type: 'openai_completions', base_url: LOCAL });
    await app().app.services.store.sql('update llm_providers set base_url = ? where id = ?', ['https://attacker.example/v1', p['id']]);
    const llmProviders = app().app.modules.llmProviders.service;
    const row = await llmProviders.getRow(await adminOrgId(app()), p['id']);
    assert.throws(() => llmProviders.openConfig(row), DecryptionError);
    await app().app.services.store.sql('update llm_providers set base_url = ?, provider_type = ? where id = ?', [LOCAL, 'openai', p['id']]);
    const retyped = await llmProviders.getRow(await adminOrgId(app()), p['id']);
    assert.throws(() => llmProviders.openConfig(retyped), DecryptionError, 'provider type is bound too');
  });

  it('a member cannot create or change a provider, not even with a new key - 403', async () => {
    const member = await createCaller(app(), 'member');
    const p = await createProvider(app(), { provider_type: 'openai_completions', base_url: LOCAL });
    for (const body of [
      { base_url: 'http://localhost:9/v1', api_key: fakeVendorKey() },
      { name: 'renamed' },
      { api_key: fakeVendorKey() },
    ]) {
      const r = await member.request('PATCH', `/v1/llm-providers/${p['id']}`, { body });
      assert.deepEqual([r.status, r.body], [403, { error: 'Forbidden', status: 403 }], JSON.stringify(body));
    }
    const created = await member.request('POST', '/v1/llm-providers', {
      body: { name: 'm', provider_type: 'llmsim', api_key: fakeVendorKey() },
    });
    assert.equal(created.status, 403);
    const after = await member.request('GET', `/v1/llm-providers/${p['id']}`);
    assert.deepEqual([after.status, after.body.name, after.body.base_url], [200, 'P', LOCAL], 'members still read');
  });
});

describe('llm providers: private base URLs need the operator (postgres)', () => {
  const strict = useSuiteApp({ env: { LLM_PROVIDER_ALLOWED_PRIVATE_HOSTS: '' } });

  it('POST / PATCH with a loopback, private, link-local or metadata base_url - 400 without the setting', async () => {
    const p = await createProvider(strict(), { provider_type: 'openai_completions' });
    for (const url of [
      'http://127.0.0.1:9/v1',
      'http://localhost:9/v1',
      'http://[::1]:9/v1',
      'http://10.1.2.3/v1',
      'http://192.168.1.1/v1',
      'http://169.254.169.254/v1',
      'http://0x7f000001/v1',
    ]) {
      const created = await strict().request('POST', '/v1/llm-providers', {
        body: { name: 'x', provider_type: 'openai_completions', api_key: fakeVendorKey(), base_url: url },
      });
      assert.equal(created.status, 400, `${url}: ${created.text}`);
      assert.match(
        created.body.error,
        /resolves to a .* address; private hosts need the operator setting LLM_PROVIDER_ALLOWED_PRIVATE_HOSTS/,
      );
      const patched = await strict().request('PATCH', `/v1/llm-providers/${p['id']}`, {
        body: { base_url: url, api_key: fakeVendorKey() },
      });
      assert.equal(patched.status, 400, `${url}: ${patched.text}`);
    }
    const unresolvable = await strict().request('POST', '/v1/llm-providers', {
      body: { name: 'x', provider_type: 'openai_completions', api_key: 'k', base_url: 'http://no-such-host.invalid/v1' },
    });
    assert.deepEqual(
      [unresolvable.status, unresolvable.body.error],
      [400, 'Invalid request: base_url host "no-such-host.invalid" cannot be resolved'],
    );
    assert.equal((await strict().request('GET', '/v1/llm-providers')).body.total, 1, 'nothing was created');
  });

  it('with the setting the listed hosts pass; cloud metadata stays refused even for `*`', async (t) => {
    const open = await startTestApp(t, { env: { LLM_PROVIDER_ALLOWED_PRIVATE_HOSTS: '127.0.0.1:9,*' } });
    const post = (base_url: string) =>
      open.request('POST', '/v1/llm-providers', { body: { name: 'x', provider_type: 'openai_completions', api_key: 'k', base_url } });
    assert.equal((await post('http://127.0.0.1:9/v1')).status, 201);
    assert.equal((await post('http://localhost:9/v1')).status, 201);
    assert.equal((await post('http://169.254.169.254/v1')).status, 400);
    const portOnly = await startTestApp(t, { databaseUrl: open.databaseUrl, env: { LLM_PROVIDER_ALLOWED_PRIVATE_HOSTS: '127.0.0.1:9' } });
    const other = await portOnly.request('POST', '/v1/llm-providers', {
      body: { name: 'x', provider_type: 'openai_completions', api_key: 'k', base_url: 'http://127.0.0.1:10/v1' },
    });
    assert.equal(other.status, 400, 'another port of an allowlisted host:port');
  });
});

describe('llm providers: keys sealed before the binding (postgres)', () => {
  it('are bound to their current destination at the next start; afterwards only the bound form opens', async (t) => {
    const env = { SECRETS_ENCRYPTION_KEY: TEST_SECRETS_KEY };
    const first = await startTestApp(t, { env });
    const key = fakeVendorKey();
    const p = await createProvider(first, { provider_type: 'openai_completions', base_url: 'http://127.0.0.1:9/v1', api_key: key });
    const orgId = await adminOrgId(first);
    const aad = { org_id: orgId, row_id: p['id'], purpose: LLM_PROVIDER_KEY_PURPOSE };
    const { keyring, store } = first.app.services;
    const llmProviders = first.app.modules.llmProviders.service;
    // What the previous version stored: sealed for organisation, row and purpose only.
    await store.sql('update llm_providers set api_key_encrypted = ? where id = ?', [encryptSecret(keyring, key, aad), p['id']]);
    await assert.rejects(
      async () => llmProviders.openConfig(await llmProviders.getRow(orgId, p['id'])),
      DecryptionError,
      'no runtime fallback to the unbound form',
    );
    await first.app.close();

    const second = await startTestApp(t, { databaseUrl: first.databaseUrl, env });
    const { store: store2, keyring: keyring2 } = second.app.services;
    const providers2 = second.app.modules.llmProviders.service;
    assert.equal(providers2.openConfig(await providers2.getRow(orgId, p['id'])).api_key, key);
    const [row] = await store2.sql<{ k: string }>('select api_key_encrypted as k from llm_providers where id = ?', [p['id']]);
    assert.equal(decryptSecret(keyring2, row!.k, { ...aad, binding: aadBinding(['openai_completions', 'http://127.0.0.1:9/v1']) }), key);
    assert.throws(() => decryptSecret(keyring2, row!.k, aad), DecryptionError);
    assert.ok(second.logs.some((l) => l.includes('llm provider keys bound to their provider type and base URL')));
  });
});
