import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createLlmProvider, LlmError, type LlmProvider, type LlmStreamEvent } from '../../src/llm/index.js';
import { startFakeAnthropic } from './fakes/anthropic.js';
import { type FakeLlmServer, sseFrame } from './fakes/fake-server.js';
import { startFakeOpenAi } from './fakes/openai.js';
import { collect, collectUntilError, request } from './provider-conformance.js';

/**
 * The SDKs make the request and the service reads the stream's body itself (src/llm/vendor-sse.ts):
 * what the SDKs' own stream readers did must still happen — vendor error events and malformed
 * chunks fail the call, the body is read to its end so the connection is reused, and a body
 * left open after the last event does not hold the call.
 */

const chunk = (delta: object, finish: string | null = null, extra: object = {}) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  created: 0,
  model: 'test-model',
  choices: [{ index: 0, delta, finish_reason: finish }],
  ...extra,
});
const usageChunk = { ...chunk({}), choices: [], usage: { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 } };
const helloFrames = [
  sseFrame(chunk({ role: 'assistant', content: 'Hel' })),
  sseFrame(chunk({ content: 'lo' })),
  sseFrame(chunk({}, 'stop')),
  sseFrame(usageChunk),
  sseFrame('[DONE]'),
];
const text = (events: LlmStreamEvent[]) => events.map((e) => (e.type === 'text_delta' ? e.text : '')).join('');

describe('openai_completions - the stream read from the SDK response', () => {
  let fake: FakeLlmServer;
  let provider: LlmProvider;
  before(async () => {
    fake = await startFakeOpenAi();
    provider = createLlmProvider(
      { provider_type: 'openai_completions', api_key: 'test-key', base_url: `${fake.origin}/v1` },
      { maxRetries: 0, sleep: async () => undefined },
    );
  });
  after(() => fake.close());

  test('sequential calls reuse their connections: every body is read to its end, none aborted', async () => {
    const before = fake.connections();
    for (let i = 0; i < 10; i++) {
      fake.enqueue({ type: 'frames', frames: helloFrames });
      assert.equal(text(await collect(provider.stream(request()))), 'Hello');
    }
    // The pool may open a second one while the first is being released; an abort per call opens ten.
    assert.ok(fake.connections() - before <= 2, `${fake.connections() - before} connections for 10 calls`);
  });

  test('a body left open after [DONE] ends the call within the grace, with the whole answer', async () => {
    fake.enqueue({ type: 'frames', frames: helloFrames, hold_open: true });
    const t0 = performance.now();
    const events = await collect(provider.stream(request()));
    const ms = performance.now() - t0;
    assert.equal(text(events), 'Hello');
    assert.deepEqual(events.at(-1), { type: 'done', stop_reason: 'end_turn' });
    assert.ok(ms >= 900 && ms < 5_000, `ended after ${Math.round(ms)} ms`);
  });

  test('a character split across two reads of the body comes out whole', async () => {
    const frame = Buffer.from(sseFrame(chunk({ role: 'assistant', content: 'Zeit: 日本 é' })));
    const cut = frame.indexOf(Buffer.from('日')) + 1; // inside the character's three bytes
    const rest = helloFrames.slice(2).join('');
    fake.enqueue({ type: 'frames', frames: [frame.subarray(0, cut), frame.subarray(cut), rest], frame_delay_ms: 20 });
    assert.equal(text(await collect(provider.stream(request()))), 'Zeit: 日本 é');
  });

  test('frames after [DONE] are not read as chunks', async () => {
    fake.enqueue({ type: 'frames', frames: [...helloFrames, sseFrame(chunk({ content: ' again' }))] });
    assert.equal(text(await collect(provider.stream(request()))), 'Hello');
  });

  test('an error event mid-stream fails the call with the vendor code, after the text before it', async () => {
    fake.enqueue({
      type: 'frames',
      frames: [
        sseFrame(chunk({ content: 'Hel' })),
        sseFrame({ error: { message: 'overloaded', type: 'server_error', code: 'overloaded' } }, 'error'),
      ],
    });
    const { events, error } = await collectUntilError(provider.stream(request()));
    assert.equal(text(events), 'Hel');
    assert.ok(error instanceof LlmError, String(error));
    assert.equal(error.kind, 'server');
    assert.equal(error.vendorCode, 'overloaded');
  });

  test('a chunk carrying an error fails the call with its code', async () => {
    fake.enqueue({ type: 'frames', frames: [sseFrame({ error: { message: 'slow down', type: 'rate_limit_exceeded', code: null } })] });
    const { error } = await collectUntilError(provider.stream(request()));
    assert.ok(error instanceof LlmError, String(error));
    assert.equal(error.kind, 'rate_limit');
  });

  test('a chunk that is not JSON fails the call', async () => {
    fake.enqueue({ type: 'frames', frames: [sseFrame(chunk({ content: 'Hel' })), 'data: {"choices": [\n\n'] });
    const { events, error } = await collectUntilError(provider.stream(request()));
    assert.equal(text(events), 'Hel');
    assert.ok(error instanceof LlmError, String(error));
    assert.equal(error.kind, 'server');
  });

  test('a body that ends without [DONE] or a finish is a truncated stream', async () => {
    fake.enqueue({ type: 'frames', frames: [sseFrame(chunk({ content: 'Hel' }))] });
    const { error } = await collectUntilError(provider.stream(request()));
    assert.ok(error instanceof LlmError, String(error));
    assert.equal(error.vendorCode, 'stream_truncated');
  });
});

describe('anthropic - the stream read from the SDK response', () => {
  let fake: FakeLlmServer;
  let provider: LlmProvider;
  before(async () => {
    fake = await startFakeAnthropic();
    provider = createLlmProvider(
      { provider_type: 'anthropic', api_key: 'test-key', base_url: fake.origin },
      { maxRetries: 0, sleep: async () => undefined },
    );
  });
  after(() => fake.close());

  const start = sseFrame(
    {
      type: 'message_start',
      message: {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model: 'm',
        content: [],
        stop_reason: null,
        usage: { input_tokens: 5, output_tokens: 0 },
      },
    },
    'message_start',
  );
  const textBlock = [
    sseFrame({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, 'content_block_start'),
    sseFrame({ type: 'ping' }, 'ping'),
    sseFrame({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi' } }, 'content_block_delta'),
  ];
  const end = [
    sseFrame({ type: 'content_block_stop', index: 0 }, 'content_block_stop'),
    sseFrame({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 1 } }, 'message_delta'),
    sseFrame({ type: 'message_stop' }, 'message_stop'),
  ];

  test('pings are skipped, a body left open after message_stop ends the call within the grace', async () => {
    fake.enqueue({ type: 'frames', frames: [start, ...textBlock, ...end], hold_open: true });
    const t0 = performance.now();
    const events = await collect(provider.stream(request()));
    assert.equal(text(events), 'Hi');
    assert.deepEqual(events.at(-1), { type: 'done', stop_reason: 'end_turn' });
    assert.ok(performance.now() - t0 < 5_000);
  });

  test('sequential calls reuse their connections', async () => {
    const before = fake.connections();
    for (let i = 0; i < 10; i++) {
      fake.enqueue({ type: 'frames', frames: [start, ...textBlock, ...end] });
      assert.equal(text(await collect(provider.stream(request()))), 'Hi');
    }
    assert.ok(fake.connections() - before <= 2, `${fake.connections() - before} connections for 10 calls`);
  });

  test('an error event mid-stream fails the call with its type', async () => {
    const error = sseFrame({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, 'error');
    fake.enqueue({ type: 'frames', frames: [start, ...textBlock, error] });
    const result = await collectUntilError(provider.stream(request()));
    assert.equal(text(result.events), 'Hi');
    assert.ok(result.error instanceof LlmError, String(result.error));
    assert.equal(result.error.vendorCode, 'overloaded_error');
  });
});
