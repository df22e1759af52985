import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createLlmProvider, LlmError, type LlmMessage, type LlmStreamEvent } from '../../src/llm/index.js';
import { parseLlmsimScript } from '../../src/llm/llmsim-directives.js';
import { words } from '../../src/llm/llmsim.js';
import { collect, collectUntilError, request } from './provider-conformance.js';

const user = (text: string): LlmMessage => ({ role: 'user', content: [{ type: 'text', text }] });
const text = (events: LlmStreamEvent[]) => events.flatMap((e) => (e.type === 'text_delta' ? [e.text] : [])).join('');

function sim(sleeps: number[] = []) {
  return createLlmProvider({ provider_type: 'llmsim', api_key: '' }, { maxRetries: 2, sleep: async (ms) => void sleeps.push(ms) });
}

describe('llmsim', () => {
  test('llmsim - echoes the user text by default, with deterministic usage', async () => {
    const events = await collect(sim().stream(request({ system: 'be brief', messages: [user('hello there world')] })));
    assert.equal(text(events), 'hello there world');
    assert.deepEqual(events.slice(-2), [
      { type: 'usage', input_tokens: 5, output_tokens: 3, cache_read_tokens: 0 },
      { type: 'done', stop_reason: 'end_turn' },
    ]);
  });

  test('llmsim - @tokens streams N tokens with the given delay', async () => {
    const started = Date.now();
    const events = await collect(sim().stream(request({ messages: [user('@tokens 40 delay=2')] })));
    const deltas = events.filter((e) => e.type === 'text_delta');
    assert.equal(deltas.length, 40);
    assert.ok(Date.now() - started >= 70, 'took about 40 x 2 ms');
    assert.equal(text(events).split(' ').length, 40);
    assert.equal((events.at(-2) as { output_tokens: number }).output_tokens, 40);
  });

  test('llmsim - several @tool lines are parallel calls of one step; results end the turn with a summary', async () => {
    const messages: LlmMessage[] = [
      user('Check both\n@tool get_current_time {"timezone":"UTC"}\n@tool get_current_time {"timezone":"Asia/Tokyo"}'),
    ];
    const step1 = await collect(sim().stream(request({ messages })));
    assert.equal(text(step1), '');
    assert.deepEqual(
      step1.filter((e) => e.type === 'tool_call'),
      [
        { type: 'tool_call', id: 'sim_1_0', name: 'get_current_time', arguments: { timezone: 'UTC' } },
        { type: 'tool_call', id: 'sim_1_1', name: 'get_current_time', arguments: { timezone: 'Asia/Tokyo' } },
      ],
    );
    assert.deepEqual(step1.at(-1), { type: 'done', stop_reason: 'tool_use' });
    messages.push(
      {
        role: 'assistant',
        content: '',
        tool_calls: [
          { id: 'sim_1_0', name: 'get_current_time', arguments: {} },
          { id: 'sim_1_1', name: 'get_current_time', arguments: {} },
        ],
      },
      { role: 'tool', tool_call_id: 'sim_1_0', name: 'get_current_time', content: '12:00' },
      { role: 'tool', tool_call_id: 'sim_1_1', name: 'get_current_time', content: 'bad zone', is_error: true },
    );
    const step2 = await collect(sim().stream(request({ messages })));
    assert.equal(text(step2), 'Received 2 tool results. get_current_time: 12:00; get_current_time (error): bad zone');
    assert.deepEqual(step2.at(-1), { type: 'done', stop_reason: 'end_turn' });
  });

  test('llmsim - @loop requests a tool on every step, even after results', async () => {
    const messages: LlmMessage[] = [
      user('@loop'),
      { role: 'assistant', content: '', tool_calls: [{ id: 'sim_1_0', name: 'get_current_time', arguments: {} }] },
      { role: 'tool', tool_call_id: 'sim_1_0', name: 'get_current_time', content: 'x' },
    ];
    const events = await collect(sim().stream(request({ messages })));
    assert.deepEqual(
      events.find((e) => e.type === 'tool_call'),
      { type: 'tool_call', id: 'sim_3_0', name: 'get_current_time', arguments: {} },
    );
    assert.deepEqual(events.at(-1), { type: 'done', stop_reason: 'tool_use' });
  });

  test('llmsim - @think streams thinking before the answer', async () => {
    const events = await collect(sim().stream(request({ messages: [user('@think 3\nanswer')] })));
    assert.deepEqual(
      events.slice(0, 4).map((e) => e.type),
      ['thinking_delta', 'thinking_delta', 'thinking_delta', 'text_delta'],
    );
    assert.equal(text(events), 'answer');
  });

  test('llmsim - @fail rate_limit is retried, then surfaces; times=N fails N attempts only', async () => {
    const sleeps: number[] = [];
    const { error } = await collectUntilError(sim(sleeps).stream(request({ messages: [user('@fail rate_limit retry_after=7')] })));
    assert.ok(error instanceof LlmError && error.kind === 'rate_limit');
    assert.deepEqual(sleeps, [7, 7]);
    const events = await collect(sim().stream(request({ messages: [user('@fail server times=2\nfine')] })));
    assert.equal(text(events), 'fine');
  });

  test('llmsim - @fail auth is not retried; @fail network after=N cuts the stream after N tokens', async () => {
    const sleeps: number[] = [];
    const auth = await collectUntilError(sim(sleeps).stream(request({ messages: [user('@fail auth')] })));
    assert.equal((auth.error as LlmError).kind, 'auth');
    assert.deepEqual(sleeps, []);
    const cut = await collectUntilError(sim(sleeps).stream(request({ messages: [user('@tokens 10\n@fail network after=3')] })));
    assert.equal(cut.events.length, 3);
    assert.equal((cut.error as LlmError).kind, 'network');
    assert.deepEqual(sleeps, [], 'no retry once output was streamed');
  });

  test('llmsim - abort during a slow stream rejects with the reason', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('stop')), 30);
    const { events, error } = await collectUntilError(
      sim().stream(request({ messages: [user('@tokens 1000 delay=5')], signal: controller.signal })),
    );
    assert.ok(events.length > 0 && events.length < 1000);
    assert.equal((error as Error).message, 'stop');
  });

  test('llmsim - invalid @tool JSON is reported as invalid_arguments; unknown @words stay text', async () => {
    const events = await collect(sim().stream(request({ messages: [user('@tool get_current_time {oops')] })));
    assert.deepEqual(events[0], { type: 'tool_call', id: 'sim_1_0', name: 'get_current_time', arguments: {}, invalid_arguments: '{oops' });
    assert.equal(parseLlmsimScript('@alice hi\n@tokens many').text, '@alice hi\n@tokens many');
  });

  test('llmsim - lists one model', async () => {
    assert.deepEqual(await sim().listModels!(), [{ id: 'llmsim', display_name: 'LLM simulator' }]);
  });
});

describe('llmsim word count', () => {
  test('counts words exactly like split(/\\s+/) without empty strings, for every whitespace character', () => {
    const spaces = [
      ' ',
      '\t',
      '\n',
      '\v',
      '\f',
      '\r',
      '\u00a0',
      '\u1680',
      '\u2000',
      '\u2005',
      '\u200a',
      '\u2028',
      '\u2029',
      '\u202f',
      '\u205f',
      '\u3000',
      '\ufeff',
    ];
    const texts = ['', ' ', 'one', ' one ', 'one two', 'a\u200bb', 'é ü\u0085x', ...spaces.map((s) => `${s}x${s}${s}y z${s}`)];
    for (const text of texts) assert.equal(words(text), text.split(/\s+/).filter(Boolean).length, JSON.stringify(text));
  });
});
