import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { uuidv7 } from 'uuidv7';
import { createModelResolver } from '../../../src/api/llm-models/index.js';
import { NotFoundError } from '../../../src/errors.js';
import type { LlmProvider, LlmStreamEvent } from '../../../src/llm/index.js';
import type { FakeLlmServer } from '../../llm/fakes/fake-server.js';
import { startFakeOpenAi } from '../../llm/fakes/openai.js';
import { addModel, adminOrgId, createOtherOrg, createProvider, useSuiteApp } from '../llm-providers/helpers.js';

async function say(provider: LlmProvider, model: string): Promise<string> {
  let text = '';
  for await (const e of provider.stream({
    model,
    system: 'Be brief.',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
    tools: [],
    controls: {},
  }) as AsyncIterable<LlmStreamEvent>) {
    if (e.type === 'text_delta') text += e.text;
  }
  return text;
}

describe('llm models: model resolver (postgres)', () => {
  let fake: FakeLlmServer;
  before(async () => {
    fake = await startFakeOpenAi({ api_key: 'key-one' });
  });
  after(() => fake.close());
  const app = useSuiteApp();
  const services = () => app().app.services;
  const resolver = () => app().app.modules.llmModels.modelResolver;

  it('null resolves to the organisation default, else to the built-in llmsim', async () => {
    const orgId = await adminOrgId(app());
    assert.deepEqual(pick(await resolver().resolve(orgId, null)), {
      model: 'llmsim',
      model_id: 'llmsim',
      provider_id: 'llmsim',
      type: 'llmsim',
    });
    const p = await createProvider(app(), { provider_type: 'openai_completions', api_key: 'key-one', base_url: `${fake.origin}/v1` });
    const m = await addModel(app(), p['id'], { model_id: 'gpt-fake' });
    assert.equal((await app().request('PUT', '/v1/llm-models/default', { body: { model_id: m['id'] } })).status, 200);
    const resolved = await resolver().resolve(orgId, null);
    assert.deepEqual(pick(resolved), { model: 'gpt-fake', model_id: m['id'], provider_id: p['id'], type: 'openai_completions' });
    // A direct SQL change bypasses the service, so the cached default stays until invalidated
    // (another instance's PUT is seen after the cache TTL, 5 s: asked right away, well within it).
    await services().store.sql('update organizations set default_model_id = ? where id = ?', [uuidv7(), orgId]);
    assert.equal((await resolver().resolve(orgId, null)).model_id, m['id'], 'cached default');
    assert.equal(await say(resolved.provider, resolved.model), 'ok');
    assert.equal(fake.requests.at(-1)!.headers.authorization, 'Bearer key-one');
    resolver().invalidateDefault(orgId);
    assert.equal((await resolver().resolve(orgId, null)).model_id, 'llmsim', 'a dangling default falls back');
    assert.ok(app().logs.some((l) => l.includes('organization default model no longer exists')));
    await services().store.sql('update organizations set default_model_id = null where id = ?', [orgId]);
    resolver().invalidateDefault(orgId);
  });

  it('the organisation default is cached: a PUT here is seen at once, a resolver without the cache reads every time', async () => {
    const orgId = await adminOrgId(app());
    const uncached = createModelResolver(
      { store: services().store, keyring: services().keyring, log: services().log, systemDefault: 'llmsim' },
      { defaultCacheTtlMs: 0 },
    );
    assert.equal((await resolver().resolve(orgId, null)).model_id, 'llmsim');
    const p = await createProvider(app(), { provider_type: 'llmsim' });
    const m = await addModel(app(), p['id'], { model_id: 'llmsim' });
    assert.equal((await app().request('PUT', '/v1/llm-models/default', { body: { model_id: m['id'] } })).status, 200);
    assert.equal((await resolver().resolve(orgId, null)).model_id, m['id'], 'invalidated by the PUT');
    assert.equal((await uncached.resolve(orgId, null)).model_id, m['id']);
    await services().store.sql('update organizations set default_model_id = null where id = ?', [orgId]);
    assert.equal((await uncached.resolve(orgId, null)).model_id, 'llmsim');
    assert.equal((await resolver().resolve(orgId, null)).model_id, m['id'], 'still cached');
    assert.equal((await app().request('PUT', '/v1/llm-models/default', { body: { model_id: null } })).status, 200);
    assert.equal((await resolver().resolve(orgId, null)).model_id, 'llmsim');
  });

  it('an explicit id resolves to its model; unknown, malformed and foreign ids are NotFoundError', async () => {
    const orgId = await adminOrgId(app());
    const p = await createProvider(app(), { provider_type: 'llmsim' });
    const m = await addModel(app(), p['id'], { model_id: 'llmsim' });
    assert.deepEqual(pick(await resolver().resolve(orgId, m['id'])), {
      model: 'llmsim',
      model_id: m['id'],
      provider_id: p['id'],
      type: 'llmsim',
    });
    const other = await createOtherOrg(app());
    for (const id of [uuidv7(), 'gpt-4o', m['id'].toUpperCase().replace(/./, 'x')]) {
      await assert.rejects(resolver().resolve(orgId, id), NotFoundError);
    }
    await assert.rejects(resolver().resolve(other.orgId, m['id']), NotFoundError);
    assert.equal((await resolver().resolve(orgId, 'llmsim')).provider_id, 'llmsim');
  });

  it('providers are cached per row version; a new key is used at once, here and on another instance', async () => {
    const orgId = await adminOrgId(app());
    const p = await createProvider(app(), { provider_type: 'openai_completions', api_key: 'key-one', base_url: `${fake.origin}/v1` });
    const m = await addModel(app(), p['id'], { model_id: 'gpt-fake' });
    const here = resolver();
    const elsewhere = createModelResolver({
      store: services().store,
      keyring: services().keyring,
      log: services().log,
      systemDefault: 'llmsim',
    });
    const first = await here.resolve(orgId, m['id']);
    assert.equal((await here.resolve(orgId, m['id'])).provider, first.provider, 'reused');
    const remote = await elsewhere.resolve(orgId, m['id']);
    assert.equal((await elsewhere.resolve(orgId, m['id'])).provider, remote.provider);

    assert.equal((await app().request('PATCH', `/v1/llm-providers/${p['id']}`, { body: { api_key: 'key-two' } })).status, 200);
    for (const r of [here, elsewhere]) {
      const next = await r.resolve(orgId, m['id']);
      assert.notEqual(next.provider, first.provider);
      assert.notEqual(next.provider, remote.provider);
      await assert.rejects(say(next.provider, next.model), /rejected the credentials/, 'the fake only knows key-one');
      assert.equal(fake.requests.at(-1)!.headers.authorization, 'Bearer key-two');
    }
  });

  it('at most maxCachedProviders providers are kept; the least recently used is rebuilt', async () => {
    const orgId = await adminOrgId(app());
    const small = createModelResolver(
      { store: services().store, keyring: services().keyring, log: services().log, systemDefault: 'llmsim' },
      { maxCachedProviders: 2 },
    );
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const p = await createProvider(app(), { provider_type: 'llmsim' });
      ids.push((await addModel(app(), p['id'], { model_id: 'llmsim' }))['id']);
    }
    const [one, two, three] = ids as [string, string, string];
    const first = (await small.resolve(orgId, one)).provider;
    const second = (await small.resolve(orgId, two)).provider;
    assert.equal((await small.resolve(orgId, one)).provider, first, 'used again: now the most recent');
    await small.resolve(orgId, three);
    assert.equal(small.cachedCount(), 2);
    assert.equal((await small.resolve(orgId, one)).provider, first, 'kept');
    assert.notEqual((await small.resolve(orgId, two)).provider, second, 'the least recently used was dropped');
  });

  it('no system default: a turn with no model anywhere is NotFoundError; the cache expires', async () => {
    const orgId = await adminOrgId(app());
    const strict = createModelResolver(
      { store: services().store, keyring: services().keyring, log: services().log, systemDefault: null },
      { cacheTtlMs: 0 },
    );
    await assert.rejects(
      strict.resolve(orgId, null),
      (err: unknown) => err instanceof NotFoundError && /No LLM model is configured/.test(err.message),
    );
    await assert.rejects(strict.resolve(orgId, 'llmsim'), NotFoundError);
    // A provider row of the simulator's type is the simulator too: refused as well (LLMSIM_ENABLED off).
    const sim = await createProvider(app(), { provider_type: 'llmsim' });
    const simModel = await addModel(app(), sim['id'], { model_id: 'llmsim' });
    await assert.rejects(
      strict.resolve(orgId, simModel['id']),
      (err: unknown) => err instanceof NotFoundError && /not enabled/.test(err.message),
    );
    const p = await createProvider(app(), { provider_type: 'openai' });
    const m = await addModel(app(), p['id'], { model_id: 'gpt-x' });
    const a = await strict.resolve(orgId, m['id']);
    assert.notEqual((await strict.resolve(orgId, m['id'])).provider, a.provider, 'ttl 0: rebuilt');
  });
});

function pick(r: { model: string; model_id: string; provider_id: string; provider: LlmProvider }) {
  return { model: r.model, model_id: r.model_id, provider_id: r.provider_id, type: r.provider.type };
}
