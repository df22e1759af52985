import assert from 'node:assert/strict';
import { registerHooks } from 'node:module';
import { after, before, test } from 'node:test';
import type { FakeLlmServer } from './fakes/fake-server.js';

// Every module this process loads from here on (this file runs in a process of its own).
const loaded: string[] = [];
registerHooks({
  load(url, context, nextLoad) {
    loaded.push(url);
    return nextLoad(url, context);
  },
});
const { createLlmProvider } = await import('../../src/llm/index.js');
const { startFakeAnthropic } = await import('./fakes/anthropic.js');
const { startFakeOpenAi } = await import('./fakes/openai.js');
const { collect, request } = await import('./provider-conformance.js');

const sdkLoaded = (pkg: string) => loaded.some((url) => url.includes(`/node_modules/${pkg}/`));

let anthropic: FakeLlmServer;
let openai: FakeLlmServer;
before(async () => {
  anthropic = await startFakeAnthropic({ models: [{ id: 'claude-a', display_name: 'Claude A' }] });
  openai = await startFakeOpenAi({ models: [{ id: 'gpt-a', display_name: 'GPT A' }] });
});
after(async () => {
  await anthropic.close();
  await openai.close();
});

test('a vendor provider is built without its SDK, which loads at the first stream and streams the answer', async () => {
  const provider = createLlmProvider({ provider_type: 'anthropic', api_key: 'test-key', base_url: anthropic.origin });
  assert.equal(provider.type, 'anthropic');
  assert.equal(sdkLoaded('@anthropic-ai/sdk'), false, 'the Anthropic SDK was loaded before the first call');
  anthropic.enqueue({ type: 'reply', reply: { text: ['Hello ', 'there.'] } });
  const events = await collect(provider.stream(request()));
  assert.equal(events.flatMap((e) => (e.type === 'text_delta' ? [e.text] : [])).join(''), 'Hello there.');
  assert.deepEqual(events.at(-1), { type: 'done', stop_reason: 'end_turn' });
  assert.equal(sdkLoaded('@anthropic-ai/sdk'), true);
  assert.equal(anthropic.requests.at(-1)?.url, '/v1/messages');
});

test('a model listing is the first call of a lazily built provider', async () => {
  const provider = createLlmProvider({ provider_type: 'openai', api_key: 'test-key', base_url: `${openai.origin}/v1` });
  assert.equal(sdkLoaded('openai'), false, 'the OpenAI SDK was loaded before the first call');
  assert.deepEqual(await provider.listModels!(), [{ id: 'gpt-a', display_name: 'gpt-a' }]);
  assert.equal(sdkLoaded('openai'), true);
});

test('a wrong key still fails as the vendor provider would, after the lazy load', async () => {
  const provider = createLlmProvider({ provider_type: 'anthropic', api_key: 'wrong', base_url: anthropic.origin }, { maxRetries: 0 });
  await assert.rejects(collect(provider.stream(request())), { name: 'LlmError', kind: 'auth' });
});
