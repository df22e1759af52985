import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createLlmProvider } from '../../src/llm/index.js';
import { mapChatStream, toChatParams } from '../../src/llm/openai-completions.js';
import { startFakeOpenAi } from './fakes/openai.js';
import type { FakeLlmServer } from './fakes/fake-server.js';
import { collect, derivedHistories, request, runProviderConformance } from './provider-conformance.js';

runProviderConformance({
  name: 'openai_completions (Chat Completions)',
  provider_type: 'openai_completions',
  start: (opts) => startFakeOpenAi(opts),
  baseUrl: (origin) => `${origin}/v1`,
  retryAfterMs: 1000,
});

describe('openai_completions request mapping', () => {
  let fake: FakeLlmServer;
  before(async () => {
    fake = await startFakeOpenAi();
  });
  after(() => fake.close());

  test('openai_completions - histories derived step by step reach the wire as the mapping of the same messages as new objects', async () => {
    const provider = createLlmProvider({ provider_type: 'openai_completions', api_key: 'test-key', base_url: `${fake.origin}/v1` });
    for (const history of derivedHistories()) {
      await collect(provider.stream(request({ messages: history })));
      // Parsed from the bytes the fake received: escaping, unicode and the derived prefix all round-trip.
      assert.deepEqual(
        fake.requests.at(-1)!.body,
        JSON.parse(JSON.stringify(toChatParams(request({ messages: structuredClone(history) }), false))),
      );
    }
  });

  test('openai_completions - messages, tools, usage option and controls map to the chunked request', async () => {
    const provider = createLlmProvider({ provider_type: 'openai_completions', api_key: 'test-key', base_url: `${fake.origin}/v1` });
    await collect(
      provider.stream(
        request({
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: 'Look' },
                { type: 'image', media_type: 'image/jpeg', data_base64: '/9j/' },
              ],
            },
            { role: 'assistant', content: '', tool_calls: [{ id: 'call_1', name: 'get_current_time', arguments: {} }] },
            { role: 'tool', tool_call_id: 'call_1', name: 'get_current_time', content: '12:00' },
          ],
          controls: { max_tokens: 100, temperature: 0, reasoning_effort: 'low' },
        }),
      ),
    );
    const { url, body } = fake.requests.at(-1)!;
    assert.equal(url, '/v1/chat/completions');
    assert.deepEqual(body.stream_options, { include_usage: true });
    assert.equal(body.parallel_tool_calls, true);
    assert.deepEqual(body.tools[0], {
      type: 'function',
      function: { name: 'get_current_time', description: 'Current time', parameters: request().tools[0]!.parameters },
    });
    assert.equal(body.max_tokens, 100, 'custom base URL: max_tokens for compatible servers');
    assert.equal(body.max_completion_tokens, undefined);
    assert.equal(body.temperature, 0);
    assert.equal(body.reasoning_effort, 'low');
    assert.deepEqual(body.messages, [
      { role: 'system', content: 'You are terse.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Look' },
          { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/' } },
        ],
      },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_current_time', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '12:00' },
    ]);
  });

  test('openai_completions - interleaved tool-call fragments are assembled by index; bad JSON is reported', async () => {
    const chunk = (delta: object, finish_reason: string | null = null) =>
      ({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason }] }) as any;
    const chunks = (async function* () {
      yield chunk({ tool_calls: [{ index: 0, id: 'a', function: { name: 'f', arguments: '{"x"' } }] });
      yield chunk({ tool_calls: [{ index: 1, id: 'b', function: { name: 'g', arguments: '{"y":' } }] });
      yield chunk({ tool_calls: [{ index: 0, function: { arguments: ':1}' } }] });
      yield chunk({ tool_calls: [{ index: 1, function: { arguments: 'oops' } }] });
      yield chunk({}, 'tool_calls');
    })();
    const events = await collect(mapChatStream(chunks));
    assert.deepEqual(events.slice(0, 2), [
      { type: 'tool_call', id: 'a', name: 'f', arguments: { x: 1 } },
      { type: 'tool_call', id: 'b', name: 'g', arguments: {}, invalid_arguments: '{"y":oops' },
    ]);
    assert.deepEqual(events.at(-1), { type: 'done', stop_reason: 'tool_use' });
    assert.deepEqual(events.at(-2), { type: 'usage', input_tokens: 0, output_tokens: 0, cache_read_tokens: 0 });
  });

  test('openai_completions - the cache key goes out as prompt_cache_key on OpenAI’s endpoint, not to compatible servers', () => {
    assert.equal(toChatParams(request({ cache_key: 'session-1' }), true).prompt_cache_key, 'session-1');
    assert.equal('prompt_cache_key' in toChatParams(request({ cache_key: 'session-1' }), false), false);
    assert.equal('prompt_cache_key' in toChatParams(request(), true), false);
  });
});
