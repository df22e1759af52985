import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createLlmProvider, type LlmStreamEvent } from '../../src/llm/index.js';
import { ANTHROPIC_THINKING_BUDGET_TOKENS, DEFAULT_ANTHROPIC_MAX_TOKENS } from '../../src/llm/anthropic-request.js';
import { startFakeAnthropic } from './fakes/anthropic.js';
import type { FakeLlmServer } from './fakes/fake-server.js';
import { collect, request, runProviderConformance } from './provider-conformance.js';

runProviderConformance({
  name: 'anthropic (Messages)',
  provider_type: 'anthropic',
  start: (opts) => startFakeAnthropic(opts),
  baseUrl: (origin) => origin,
  retryAfterMs: 1000,
});

describe('anthropic request mapping', () => {
  let fake: FakeLlmServer;
  before(async () => {
    fake = await startFakeAnthropic();
  });
  after(() => fake.close());
  const provider = () => createLlmProvider({ provider_type: 'anthropic', api_key: 'test-key', base_url: fake.origin });

  test('anthropic - prompt caching on system, last tool, first and last message; parallel tool results merged into one user turn', async () => {
    const tools = [
      { name: 'a', description: 'A', parameters: { type: 'object', properties: {} } },
      { name: 'b', description: 'B', parameters: { type: 'object', properties: {} } },
    ];
    await collect(
      provider().stream(
        request({
          tools,
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: 'Go' },
                { type: 'image', media_type: 'image/png', data_base64: 'AAAA' },
              ],
            },
            {
              role: 'assistant',
              content: '',
              tool_calls: [
                { id: 't1', name: 'a', arguments: {} },
                { id: 't2', name: 'b', arguments: { q: 1 } },
              ],
            },
            { role: 'tool', tool_call_id: 't1', name: 'a', content: 'ra' },
            { role: 'tool', tool_call_id: 't2', name: 'b', content: 'rb', is_error: true },
          ],
          controls: { temperature: 0.5 },
        }),
      ),
    );
    const { url, headers, body } = fake.requests.at(-1)!;
    assert.equal(url, '/v1/messages');
    assert.equal(headers['x-api-key'] ?? headers.authorization?.replace(/^Bearer /, ''), 'test-key');
    assert.equal(body.stream, true);
    assert.equal(body.max_tokens, DEFAULT_ANTHROPIC_MAX_TOKENS);
    assert.equal(body.temperature, 0.5);
    assert.equal(body.thinking, undefined);
    assert.deepEqual(body.system, [{ type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral' } }]);
    assert.equal(body.tools[0].cache_control, undefined);
    assert.deepEqual(body.tools[1], {
      name: 'b',
      description: 'B',
      input_schema: tools[1]!.parameters,
      cache_control: { type: 'ephemeral' },
    });
    assert.deepEqual(body.messages, [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Go', cache_control: { type: 'ephemeral' } },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 't1', name: 'a', input: {} },
          { type: 'tool_use', id: 't2', name: 'b', input: { q: 1 } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 't1', content: 'ra' },
          { type: 'tool_result', tool_use_id: 't2', content: 'rb', is_error: true, cache_control: { type: 'ephemeral' } },
        ],
      },
    ]);
  });

  test('anthropic - reasoning_effort enables thinking; signed thinking blocks round-trip via provider_state', async () => {
    fake.enqueue({
      type: 'reply',
      reply: { thinking: ['hmm'], tool_calls: [{ id: 't1', name: 'get_current_time', arguments: {} }], signature: 'SIG-1' },
    });
    const events = await collect(
      provider().stream(request({ controls: { reasoning_effort: 'medium', temperature: 0.3, max_tokens: 1000 } })),
    );
    const sent = fake.requests.at(-1)!.body;
    assert.deepEqual(sent.thinking, { type: 'enabled', budget_tokens: ANTHROPIC_THINKING_BUDGET_TOKENS.medium });
    assert.equal(sent.max_tokens, 1000 + ANTHROPIC_THINKING_BUDGET_TOKENS.medium);
    assert.equal(sent.temperature, undefined, 'temperature is not allowed with thinking');
    const done = events.at(-1) as Extract<LlmStreamEvent, { type: 'done' }>;
    assert.ok(done.provider_state);

    await collect(
      provider().stream(
        request({
          controls: { reasoning_effort: 'medium' },
          messages: [
            ...request().messages,
            {
              role: 'assistant',
              content: '',
              thinking: 'hmm',
              tool_calls: [{ id: 't1', name: 'get_current_time', arguments: {} }],
              provider_state: done.provider_state,
            },
            { role: 'tool', tool_call_id: 't1', name: 'get_current_time', content: 'noon' },
          ],
        }),
      ),
    );
    const replayed = fake.requests.at(-1)!.body.messages[1];
    assert.deepEqual(replayed.content[0], { type: 'thinking', thinking: 'hmm', signature: 'SIG-1' });
    assert.equal(replayed.content[1].type, 'tool_use');
  });

  test('anthropic - provider_state from another vendor is ignored', async () => {
    await collect(
      provider().stream(
        request({
          controls: { reasoning_effort: 'low' },
          messages: [...request().messages, { role: 'assistant', content: 'Hi', provider_state: '{"p":"gemini","signatures":{}}' }],
        }),
      ),
    );
    assert.deepEqual(fake.requests.at(-1)!.body.messages[1].content, [{ type: 'text', text: 'Hi', cache_control: { type: 'ephemeral' } }]);
  });

  test('anthropic - 529 overloaded is a retryable server error', async () => {
    fake.enqueue({ type: 'error', status: 529 }, { type: 'reply', reply: { text: ['ok'] } });
    const p = createLlmProvider({ provider_type: 'anthropic', api_key: 'test-key', base_url: fake.origin }, { sleep: async () => {} });
    const events = await collect(p.stream(request()));
    assert.equal(events[0]?.type, 'text_delta');
  });
});
