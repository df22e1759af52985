/**
 * Prompt caching stays effective in a long session (issue 26 item 1): OpenAI requests carry the
 * session id as `prompt_cache_key`; Anthropic's breakpoints sit on the stable prefix (system,
 * tools, the summary-led first message, the conversation's end). The wire fakes simulate each
 * vendor's cache (test/llm/fakes/prompt-cache.ts), so `cache_read_tokens` in `llm.generation`
 * is what the cache would serve: most steps read most of their request from it, compaction
 * included (only the step right after a compaction misses).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadOpenAiTokenizer } from '../../actors/session/compaction/token-count.js';
import { startFakeAnthropic } from '../llm/fakes/anthropic.js';
import type { FakeLlmServer, FakeStep, RecordedRequest } from '../llm/fakes/fake-server.js';
import { startFakeOpenAi } from '../llm/fakes/openai.js';
import { anthropicPromptCache, openAiPromptCache, type FakeUsage } from '../llm/fakes/prompt-cache.js';
import { addModel, createProvider } from '../api/llm-providers/helpers.js';
import { startTestApp, type TestMode } from '../helpers/app.js';
import { createSession, sendMessage, waitForEvent } from './helpers.js';

const KEY = 'test-key';
const TURNS = 14;
const isCompaction = (r: RecordedRequest) => JSON.stringify(r.body ?? '').includes('You compact the history');

/** A tool call for a fresh `calltool` message, a summary for a compaction request, else a short reply; usage from the cache. */
function responder(cache: (body: any) => FakeUsage) {
  let n = 0;
  return (r: RecordedRequest): FakeStep => {
    const usage = cache(r.body);
    if (isCompaction(r)) return { type: 'reply', reply: { text: ['SUMMARY-CACHE of the notes so far'], usage } };
    const items: unknown[] = r.body?.input ?? r.body?.messages ?? [];
    const last = JSON.stringify(items.at(-1) ?? '');
    if (last.includes('calltool') && !/function_call_output|tool_result/.test(last))
      return { type: 'reply', reply: { tool_calls: [{ id: `call_${++n}`, name: 'get_current_time', arguments: {} }], usage } };
    return { type: 'reply', reply: { text: ['noted'], usage } };
  };
}

const vendors = [
  {
    vendor: 'openai',
    mode: 'pglite',
    start: () => startFakeOpenAi({ api_key: KEY, respond: responder(openAiPromptCache()) }),
    baseUrl: (f: FakeLlmServer) => `${f.origin}/v1`,
    model: 'gpt-4o',
  },
  {
    vendor: 'anthropic',
    mode: 'nats',
    start: () => startFakeAnthropic({ api_key: KEY, respond: responder(anthropicPromptCache()) }),
    baseUrl: (f: FakeLlmServer) => f.origin,
    model: 'claude-sonnet-4-5',
  },
] as const;

before(async () => assert.ok(await loadOpenAiTokenizer(), 'gpt-tokenizer loads'));

for (const v of vendors) {
  describe(`prompt caching in a long session: ${v.vendor} (${v.mode})`, () => {
    let fake: FakeLlmServer;
    before(async () => {
      fake = await v.start();
    });
    after(() => fake.close());

    it(`${TURNS} turns with tools and a compaction: most steps read most of their request from the cache`, async (t) => {
      const app = await startTestApp(t, { mode: v.mode satisfies TestMode });
      const p = await createProvider(app, { provider_type: v.vendor, api_key: KEY, base_url: v.baseUrl(fake) });
      const m = await addModel(app, p['id'], { model_id: v.model, context_window: 1_500 });
      const { id } = await createSession(app, { default_model_id: m['id'], capabilities: ['current_time'] });
      let events: Awaited<ReturnType<typeof waitForEvent>> = [];
      for (let n = 1; n <= TURNS; n++) {
        const sent = await sendMessage(app, id, `note ${n}${n % 2 ? ' calltool' : ''} ${'words of the note '.repeat(20)}`);
        assert.equal(sent.status, 201, sent.text);
        events = await waitForEvent(app, id, 'session.idled', { n });
      }
      assert.ok(!events.some((e) => e.type === 'turn.failed'));
      assert.ok(
        events.some((e) => e.type === 'session.compacted'),
        'the session compacted on the way',
      );

      const steps = events.filter((e) => e.type === 'llm.generation').map((e) => e.data['usage']);
      assert.ok(steps.length > TURNS, `${steps.length} steps`);
      const served = steps.slice(1).filter((u) => u.cache_read_tokens * 2 >= u.input_tokens);
      assert.ok(
        served.length >= 0.75 * (steps.length - 1),
        `${served.length} of ${steps.length - 1} steps read at least half of their request from the cache: ${JSON.stringify(steps.map((u) => [u.input_tokens, u.cache_read_tokens]))}`,
      );

      const generations = fake.requests.filter((r) => !isCompaction(r) && r.method === 'POST');
      if (v.vendor === 'openai') {
        for (const r of generations) assert.equal(r.body.prompt_cache_key, id, 'every step carries the session id as its cache key');
      } else {
        // After the compaction the summary leads the first message, a breakpoint of its own.
        const { messages } = generations.at(-1)!.body;
        assert.match(messages[0].content[0].text, /SUMMARY-CACHE/);
        assert.deepEqual(messages[0].content[0].cache_control, { type: 'ephemeral' });
      }
    });
  });
}
