import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createLlmProvider } from '../../src/llm/index.js';
import { toResponsesParams } from '../../src/llm/openai-responses.js';
import { startFakeOpenAi } from './fakes/openai.js';
import type { FakeLlmServer } from './fakes/fake-server.js';
import { collect, derivedHistories, request, runProviderConformance } from './provider-conformance.js';

runProviderConformance({
  name: 'openai (Responses)',
  provider_type: 'openai',
  start: (opts) => startFakeOpenAi(opts),
  baseUrl: (origin) => `${origin}/v1`,
  retryAfterMs: 1000,
});

describe('openai (Responses) request mapping', () => {
  let fake: FakeLlmServer;
  before(async () => {
    fake = await startFakeOpenAi();
  });
  after(() => fake.close());

  test('openai - histories derived step by step reach the wire as the mapping of the same messages as new objects', async () => {
    const provider = createLlmProvider({ provider_type: 'openai', api_key: 'test-key', base_url: `${fake.origin}/v1` });
    for (const history of derivedHistories()) {
      await collect(provider.stream(request({ messages: history })));
      // Parsed from the bytes the fake received: escaping, unicode and the derived prefix all round-trip.
      assert.deepEqual(
        fake.requests.at(-1)!.body,
        JSON.parse(JSON.stringify(toResponsesParams(request({ messages: structuredClone(history) })))),
      );
    }
  });

  test('openai - system, tools, history, tool results, image and controls map to the Responses body', async () => {
    const provider = createLlmProvider({ provider_type: 'openai', api_key: 'test-key', base_url: `${fake.origin}/v1` });
    await collect(
      provider.stream(
        request({
          model: 'gpt-5',
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: 'Look' },
                { type: 'image', media_type: 'image/png', data_base64: 'iVBORw0K' },
              ],
            },
            {
              role: 'assistant',
              content: 'Calling',
              tool_calls: [{ id: 'call_1', name: 'get_current_time', arguments: { timezone: 'UTC' } }],
            },
            { role: 'tool', tool_call_id: 'call_1', name: 'get_current_time', content: 'boom', is_error: true },
          ],
          controls: { max_tokens: 256, temperature: 0.2, reasoning_effort: 'high' },
        }),
      ),
    );
    const sent = fake.requests.at(-1)!;
    assert.equal(sent.url, '/v1/responses');
    assert.equal(sent.headers.authorization, 'Bearer test-key');
    assert.equal(sent.headers['x-stainless-retry-count'] ?? '0', '0');
    const body = sent.body;
    assert.equal(body.model, 'gpt-5');
    assert.equal(body.instructions, 'You are terse.');
    assert.equal(body.stream, true);
    assert.equal(body.store, false);
    assert.equal(body.parallel_tool_calls, true);
    assert.deepEqual(body.tools[0], {
      type: 'function',
      name: 'get_current_time',
      description: 'Current time',
      parameters: request().tools[0]!.parameters,
      strict: false,
    });
    assert.equal(body.max_output_tokens, 256);
    assert.equal(body.temperature, undefined, 'reasoning models reject temperature');
    assert.deepEqual(body.reasoning, { effort: 'high', summary: 'auto' });
    assert.deepEqual(body.input, [
      {
        role: 'user',
        content: [
          { type: 'input_text', text: 'Look' },
          { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0K', detail: 'auto' },
        ],
      },
      { role: 'assistant', content: 'Calling' },
      { type: 'function_call', call_id: 'call_1', name: 'get_current_time', arguments: '{"timezone":"UTC"}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'Error: boom' },
    ]);
  });

  test('openai - no tools, no system, no reasoning: those fields are absent; temperature passes', async () => {
    const provider = createLlmProvider({ provider_type: 'openai', api_key: 'test-key', base_url: `${fake.origin}/v1` });
    await collect(provider.stream(request({ tools: [], system: '', controls: { temperature: 0.4 } })));
    const body = fake.requests.at(-1)!.body;
    assert.equal(body.temperature, 0.4);
    assert.equal(body.tools, undefined);
    assert.equal(body.parallel_tool_calls, undefined);
    assert.equal(body.instructions, undefined);
    assert.equal(body.reasoning, undefined);
  });

  test('openai - a response.failed event with rate_limit_exceeded is a retryable rate_limit error', async () => {
    const { mapResponsesStream } = await import('../../src/llm/openai-responses.js');
    const events = (async function* () {
      yield {
        type: 'response.failed',
        sequence_number: 1,
        response: { error: { code: 'rate_limit_exceeded', message: 'slow down' } },
      } as any;
    })();
    await assert.rejects(
      collect(mapResponsesStream(events)),
      (err: any) => err.kind === 'rate_limit' && err.retryable && !/slow down/.test(err.message),
    );
  });
});
