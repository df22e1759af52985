import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  createLlmProvider,
  deriveMessages,
  LlmError,
  type LlmMessage,
  type LlmProvider,
  type LlmProviderType,
  type LlmRequest,
  type LlmStreamEvent,
} from '../../src/llm/index.js';
import type { FakeLlmServer, FakeModel, FakeReply } from './fakes/fake-server.js';

/**
 * One behavioural suite run against every vendor adapter through its real SDK and a
 * wire-level fake (style rule 18). Vendor-specific request mapping is tested per vendor.
 */

export interface ConformanceTarget {
  name: string;
  provider_type: LlmProviderType;
  start: (opts: { models: FakeModel[] }) => Promise<FakeLlmServer>;
  baseUrl: (origin: string) => string;
  /** The delay the adapter must honour for the fake's 429 (header or body hint). */
  retryAfterMs: number;
}

export async function collect(stream: AsyncIterable<LlmStreamEvent>): Promise<LlmStreamEvent[]> {
  const out: LlmStreamEvent[] = [];
  for await (const ev of stream) out.push(ev);
  return out;
}

export async function collectUntilError(stream: AsyncIterable<LlmStreamEvent>): Promise<{ events: LlmStreamEvent[]; error: unknown }> {
  const events: LlmStreamEvent[] = [];
  try {
    for await (const ev of stream) events.push(ev);
  } catch (error) {
    return { events, error };
  }
  return { events, error: undefined };
}

export function request(overrides: Partial<LlmRequest> = {}): LlmRequest {
  return {
    model: 'test-model',
    system: 'You are terse.',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'What time is it?' }] }],
    tools: [
      {
        name: 'get_current_time',
        description: 'Current time',
        parameters: { type: 'object', properties: { timezone: { type: 'string' } } },
      },
    ],
    controls: {},
    ...overrides,
  };
}

const REPLY: FakeReply = {
  thinking: ['Let me ', 'check.'],
  text: ['Checking ', 'both.'],
  tool_calls: [
    { id: 'keep_1', name: 'get_current_time', arguments: { timezone: 'UTC' } },
    { id: 'keep_2', name: 'get_current_time', arguments: { timezone: 'Europe/Paris' } },
  ],
  usage: { input_tokens: 120, output_tokens: 30, cache_read_tokens: 100 },
};

export function runProviderConformance(target: ConformanceTarget): void {
  describe(`${target.name} provider conformance`, () => {
    let fake: FakeLlmServer;
    const sleeps: number[] = [];
    const make = (opts: { api_key?: string; maxRetries?: number } = {}): LlmProvider =>
      createLlmProvider(
        { provider_type: target.provider_type, api_key: opts.api_key ?? 'test-key', base_url: target.baseUrl(fake.origin) },
        { maxRetries: opts.maxRetries ?? 2, sleep: async (ms) => void sleeps.push(ms) },
      );
    before(async () => {
      fake = await target.start({ models: [{ id: 'model-a', display_name: 'Model A' }] });
    });
    after(() => fake.close());

    test(`${target.name} - streams thinking, text and parallel tool calls, then usage and done`, async () => {
      fake.enqueue({ type: 'reply', reply: REPLY });
      const events = await collect(make().stream(request()));
      const text = events.flatMap((e) => (e.type === 'text_delta' ? [e.text] : [])).join('');
      const thinking = events.flatMap((e) => (e.type === 'thinking_delta' ? [e.text] : [])).join('');
      assert.equal(text, 'Checking both.');
      assert.equal(thinking, 'Let me check.');
      const calls = events.filter((e) => e.type === 'tool_call').map(({ id, name, arguments: args }) => ({ id, name, arguments: args }));
      assert.deepEqual(calls, REPLY.tool_calls);
      assert.deepEqual(events.at(-2), { type: 'usage', input_tokens: 120, output_tokens: 30, cache_read_tokens: 100 });
      assert.equal(events.at(-1)?.type, 'done');
      assert.equal((events.at(-1) as { stop_reason: string }).stop_reason, 'tool_use');
    });

    test(`${target.name} - plain answer ends with end_turn; truncated answer with max_tokens`, async () => {
      fake.enqueue({ type: 'reply', reply: { text: ['Hi'] } }, { type: 'reply', reply: { text: ['Hi'], stop: 'max_tokens' } });
      const first = await collect(make().stream(request()));
      assert.deepEqual(first.at(-1), { type: 'done', stop_reason: 'end_turn' });
      const second = await collect(make().stream(request()));
      assert.deepEqual(second.at(-1), { type: 'done', stop_reason: 'max_tokens' });
    });

    test(`${target.name} - 401 is an auth error, not retried, with a generic message`, async () => {
      const before = fake.requests.length;
      const { error } = await collectUntilError(make({ api_key: 'wrong-key' }).stream(request()));
      assert.ok(error instanceof LlmError);
      assert.equal(error.kind, 'auth');
      assert.equal(error.status, 401);
      assert.equal(error.message, 'LLM provider rejected the credentials');
      assert.doesNotMatch(JSON.stringify({ ...error, message: error.message, cause: String(error.cause) }), /VENDOR-BODY|wrong-key/);
      assert.equal(fake.requests.length - before, 1);
    });

    test(`${target.name} - 429 is retried after the vendor's delay hint, then succeeds`, async () => {
      sleeps.length = 0;
      fake.enqueue({ type: 'error', status: 429, retry_after: '1' }, { type: 'reply', reply: { text: ['later'] } });
      const events = await collect(make().stream(request()));
      assert.equal(events[0]?.type === 'text_delta' && events[0].text, 'later');
      assert.deepEqual(sleeps, [target.retryAfterMs]);
    });

    test(`${target.name} - 500 is retried with backoff up to maxRetries, then a server error`, async () => {
      sleeps.length = 0;
      const before = fake.requests.length;
      fake.enqueue({ type: 'error', status: 500 }, { type: 'error', status: 500 }, { type: 'error', status: 500 });
      const { error } = await collectUntilError(make({ maxRetries: 2 }).stream(request()));
      assert.ok(error instanceof LlmError);
      assert.equal(error.kind, 'server');
      assert.equal(fake.requests.length - before, 3);
      assert.equal(sleeps.length, 2);
      assert.ok(sleeps[0]! >= 250 && sleeps[0]! <= 500 && sleeps[1]! >= 500 && sleeps[1]! <= 1000, `backoff ${sleeps}`);
    });

    test(`${target.name} - a connection cut mid-stream is a network error and is not retried`, async () => {
      const before = fake.requests.length;
      fake.enqueue({ type: 'cut', reply: { text: ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'] }, after_frames: 6 });
      const { events, error } = await collectUntilError(make().stream(request()));
      assert.ok(
        events.some((e) => e.type === 'text_delta'),
        'some text arrived before the cut',
      );
      assert.ok(error instanceof LlmError, String(error));
      assert.equal(error.kind, 'network');
      assert.equal(fake.requests.length - before, 1);
    });

    test(`${target.name} - a cut before any output is retried`, async () => {
      fake.enqueue({ type: 'cut', reply: { text: ['x'] }, after_frames: 0 }, { type: 'reply', reply: { text: ['recovered'] } });
      const events = await collect(make().stream(request()));
      assert.ok(events.some((e) => e.type === 'text_delta' && e.text === 'recovered'));
    });

    test(`${target.name} - abort mid-stream rejects with the abort reason`, async () => {
      fake.enqueue({ type: 'reply', reply: { text: Array.from({ length: 50 }, (_, i) => `t${i} `) }, frame_delay_ms: 20 });
      const controller = new AbortController();
      const { events, error } = await collectUntilError(
        (async function* () {
          for await (const ev of make().stream(request({ signal: controller.signal }))) {
            yield ev;
            if (ev.type === 'text_delta') controller.abort(new Error('user cancelled'));
          }
        })(),
      );
      assert.equal(events.filter((e) => e.type === 'text_delta').length, 1);
      assert.equal((error as Error)?.message, 'user cancelled');
    });

    test(`${target.name} - listModels returns the account's chat models`, async () => {
      const models = await make().listModels!();
      assert.deepEqual(
        models.map((m) => m.id),
        ['model-a'],
      );
      assert.ok(models[0]!.display_name.length > 0);
    });
  });
}

/**
 * Three histories, each the one before with a step added and derived from it (deriveMessages:
 * what an adapter keeps per list is reused for the shared prefix, issue 26), with text that JSON
 * must escape: quotes, backslashes, control characters, unicode and a lone surrogate pair.
 */
export function derivedHistories(): LlmMessage[][] {
  const tricky = 'say "hi" \\ \u0000\u0007\u001f \n\t é 日本 \ud83d\ude00 \u2028';
  const step = (n: number): LlmMessage[] => [
    { role: 'user', content: [{ type: 'text', text: `${tricky} ${n}` }] },
    {
      role: 'assistant',
      content: n % 2 ? `${tricky} calling` : '',
      tool_calls: [{ id: `call_${n}`, name: 'get_current_time', arguments: { q: tricky, n } }],
    },
    { role: 'tool', tool_call_id: `call_${n}`, name: 'get_current_time', content: `${tricky} result ${n}`, is_error: n === 2 },
    { role: 'assistant', content: `${tricky} answer ${n}` },
  ];
  const lists: LlmMessage[][] = [step(0)];
  for (let n = 1; n < 3; n++) {
    const list = [...lists.at(-1)!, ...step(n)];
    deriveMessages(list, lists.at(-1)!, lists.at(-1)!.length);
    lists.push(list);
  }
  return lists;
}
