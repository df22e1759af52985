import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createLlmProvider, type LlmStreamEvent } from '../../src/llm/index.js';
import { startFakeGemini, GEMINI_RETRY_DELAY_S } from './fakes/gemini.js';
import type { FakeLlmServer } from './fakes/fake-server.js';
import { collect, request, runProviderConformance } from './provider-conformance.js';

runProviderConformance({
  name: 'gemini (@google/genai)',
  provider_type: 'gemini',
  start: (opts) => startFakeGemini(opts),
  baseUrl: (origin) => origin,
  retryAfterMs: GEMINI_RETRY_DELAY_S * 1000,
});

describe('gemini request mapping', () => {
  let fake: FakeLlmServer;
  before(async () => {
    fake = await startFakeGemini();
  });
  after(() => fake.close());
  const provider = () => createLlmProvider({ provider_type: 'gemini', api_key: 'test-key', base_url: fake.origin });

  test('gemini - system, tools, history, function responses, image and controls map to generateContent', async () => {
    await collect(
      provider().stream(
        request({
          model: 'gemini-2.5-flash',
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: 'Look' },
                { type: 'image', media_type: 'image/webp', data_base64: 'UklG' },
              ],
            },
            {
              role: 'assistant',
              content: 'Sure',
              tool_calls: [{ id: 'keep_9', name: 'get_current_time', arguments: { timezone: 'UTC' } }],
            },
            { role: 'tool', tool_call_id: 'keep_9', name: 'get_current_time', content: 'noon' },
          ],
          controls: { max_tokens: 64, temperature: 0.7, reasoning_effort: 'low' },
        }),
      ),
    );
    const { url, headers, body } = fake.requests.at(-1)!;
    assert.equal(url, '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    assert.equal(headers['x-goog-api-key'], 'test-key');
    assert.deepEqual(body.systemInstruction, { parts: [{ text: 'You are terse.' }], role: 'user' });
    assert.deepEqual(body.tools, [
      {
        functionDeclarations: [
          { name: 'get_current_time', description: 'Current time', parametersJsonSchema: request().tools[0]!.parameters },
        ],
      },
    ]);
    assert.deepEqual(body.generationConfig, {
      maxOutputTokens: 64,
      temperature: 0.7,
      thinkingConfig: { includeThoughts: true, thinkingBudget: 1024 },
    });
    assert.deepEqual(body.contents, [
      { role: 'user', parts: [{ text: 'Look' }, { inlineData: { mimeType: 'image/webp', data: 'UklG' } }] },
      { role: 'model', parts: [{ text: 'Sure' }, { functionCall: { id: 'keep_9', name: 'get_current_time', args: { timezone: 'UTC' } } }] },
      { role: 'user', parts: [{ functionResponse: { id: 'keep_9', name: 'get_current_time', response: { output: 'noon' } } }] },
    ]);
  });

  test('gemini - newer models get a thinking level instead of a budget', async () => {
    await collect(provider().stream(request({ model: 'gemini-3-pro', controls: { reasoning_effort: 'high' } })));
    assert.deepEqual(fake.requests.at(-1)!.body.generationConfig.thinkingConfig, { includeThoughts: true, thinkingLevel: 'HIGH' });
  });

  test('gemini - calls without ids get synthetic ids that are not sent back; signatures round-trip', async () => {
    fake.enqueue({ type: 'reply', reply: { tool_calls: [{ id: 'x', name: 'get_current_time', arguments: {} }], signature: 'GSIG' } });
    const events = await collect(provider().stream(request()));
    const call = events.find((e) => e.type === 'tool_call') as Extract<LlmStreamEvent, { type: 'tool_call' }>;
    assert.match(call.id, /^gcall_/);
    const done = events.at(-1) as Extract<LlmStreamEvent, { type: 'done' }>;
    assert.equal(done.stop_reason, 'tool_use');
    await collect(
      provider().stream(
        request({
          messages: [
            ...request().messages,
            {
              role: 'assistant',
              content: '',
              tool_calls: [{ id: call.id, name: call.name, arguments: {} }],
              provider_state: done.provider_state,
            },
            { role: 'tool', tool_call_id: call.id, name: call.name, content: 'bad tz', is_error: true },
          ],
        }),
      ),
    );
    const contents = fake.requests.at(-1)!.body.contents;
    assert.deepEqual(contents[1], {
      role: 'model',
      parts: [{ functionCall: { name: 'get_current_time', args: {} }, thoughtSignature: 'GSIG' }],
    });
    assert.deepEqual(contents[2], {
      role: 'user',
      parts: [{ functionResponse: { name: 'get_current_time', response: { error: 'bad tz' } } }],
    });
  });
});
