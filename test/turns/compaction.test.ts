import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadOpenAiTokenizer } from '../../actors/session/compaction/token-count.js';
import { startFakeAnthropic } from '../llm/fakes/anthropic.js';
import type { FakeLlmServer, FakeStep, RecordedRequest } from '../llm/fakes/fake-server.js';
import { startFakeOpenAi } from '../llm/fakes/openai.js';
import { addModel, createProvider } from '../api/llm-providers/helpers.js';
import { startTestApp, type TestApp, type TestMode } from '../helpers/app.js';
import { assertLogIntegrity, createSession, listEvents, sendMessage, waitForEvent, type StoredEvent } from './helpers.js';

const KEY = 'test-key';
const SUMMARY = 'SUMMARY-ALPHA the user sent numbered notes';
const isCompaction = (r: RecordedRequest) => JSON.stringify(r.body ?? '').includes('You compact the history');
const filler = (marker: string, words: number) => `${marker} ${'lorem '.repeat(words)}`.trim();

/** Every function_call_output of a Responses request answers a function_call of the same request, and back. */
function assertPairsIntact(body: any): void {
  const items: any[] = Array.isArray(body?.input) ? body.input : [];
  const calls = new Set(items.filter((i) => i.type === 'function_call').map((i) => i.call_id));
  const outputs = new Set(items.filter((i) => i.type === 'function_call_output').map((i) => i.call_id));
  assert.deepEqual([...outputs].sort(), [...calls].sort(), 'a tool call and its result were split');
}

/** The fake: summaries for compaction requests, a tool call for `calltool` messages, else a short reply. */
function openAiResponder(summaryStep: () => FakeStep = () => ({ type: 'reply', reply: { text: [SUMMARY] } })) {
  let n = 0;
  return (r: RecordedRequest): FakeStep => {
    if (isCompaction(r)) return summaryStep();
    const items: any[] = Array.isArray(r.body?.input) ? r.body.input : [];
    const last = items.at(-1);
    if (last?.type !== 'function_call_output' && JSON.stringify(last ?? '').includes('calltool'))
      return { type: 'reply', reply: { tool_calls: [{ id: `call_${++n}`, name: 'get_current_time', arguments: {} }] } };
    return { type: 'reply', reply: { text: ['ok'] } };
  };
}

async function openAiSession(app: TestApp, fake: FakeLlmServer, model: Record<string, unknown>, agent: Record<string, unknown> = {}) {
  const p = await createProvider(app, { provider_type: 'openai', api_key: KEY, base_url: `${fake.origin}/v1` });
  const m = await addModel(app, p['id'], model);
  return createSession(app, { default_model_id: m['id'], ...agent });
}

async function turn(app: TestApp, id: string, text: string, n: number): Promise<StoredEvent[]> {
  const sent = await sendMessage(app, id, text);
  assert.equal(sent.status, 201, sent.text);
  return waitForEvent(app, id, 'session.idled', { n });
}

const generations = (fake: FakeLlmServer) => fake.requests.filter((r) => r.url.startsWith('/v1/responses') && !isCompaction(r));

before(async () => assert.ok(await loadOpenAiTokenizer(), 'gpt-tokenizer loads'));

for (const mode of ['pglite', 'nats'] as const satisfies TestMode[]) {
  describe(`compaction: threshold crossing through the OpenAI SDK against the wire fake (${mode})`, () => {
    let fake: FakeLlmServer;
    before(async () => {
      fake = await startFakeOpenAi({ api_key: KEY, respond: openAiResponder() });
    });
    after(() => fake.close());

    it('over 80 % of a small window the older turns are summarised; tool pairs stay whole; later turns start from the summary', async (t) => {
      const app = await startTestApp(t, { mode });
      const { id } = await openAiSession(app, fake, { model_id: 'gpt-4o', context_window: 1200 }, { capabilities: ['current_time'] });
      let events: StoredEvent[] = [];
      let n = 0;
      while (!events.some((e) => e.type === 'session.compacted') && n < 10) {
        n++;
        events = await turn(app, id, filler(`m${n}marker${n % 2 ? ' calltool' : ''}`, 150), n);
      }
      const compacted = events.find((e) => e.type === 'session.compacted');
      assert.ok(compacted, `no compaction in ${n} turns`);
      assert.equal(compacted.data['reason'], 'threshold');
      assert.equal(compacted.data['summary'], SUMMARY);
      assert.ok(compacted.data['tokens_before'] > 1200 * 0.8, `tokens_before ${compacted.data['tokens_before']}`);
      assert.ok(compacted.data['tokens_after'] < compacted.data['tokens_before']);
      assert.equal(compacted.data['model'], 'gpt-4o');
      assert.ok(compacted.data['usage'].input_tokens > 0, 'the summary call is accounted');
      // The boundary is an entry of the log: a user message or a completed step.
      const boundary = events.find((e) => e.id === compacted.data['up_to_event_id']);
      assert.ok(boundary && ['input.message', 'output.message.completed'].includes(boundary.type));

      const summaryCall = fake.requests.find(isCompaction)!;
      assert.match(JSON.stringify(summaryCall.body), /m1marker/, 'the oldest turn was summarised');
      const after = generations(fake).at(-1)!;
      const sent = JSON.stringify(after.body);
      assert.match(sent, /SUMMARY-ALPHA/, 'the step after the compaction starts from the summary');
      assert.doesNotMatch(sent, /m1marker/, 'the summarised turn is not sent again');
      assert.match(sent, new RegExp(`m${n}marker`), 'the newest message stays verbatim');
      for (const r of generations(fake)) assertPairsIntact(r.body);

      // The next turn starts from the summary too, and the log keeps everything.
      events = await turn(app, id, filler(`m${n + 1}marker`, 20), n + 1);
      const next = JSON.stringify(generations(fake).at(-1)!.body);
      assert.match(next, /SUMMARY-ALPHA/);
      assert.doesNotMatch(next, /m1marker/);
      assert.equal(events.filter((e) => e.type === 'input.message').length, n + 1);
      assert.ok(!events.some((e) => e.type === 'turn.failed'));
      assertLogIntegrity(events);
      const messages = await app.request('GET', `/v1/sessions/${id}/messages?limit=100`);
      assert.equal(messages.status, 200, messages.text);
      assert.match(JSON.stringify(messages.body), /m1marker/, 'the messages view is unchanged');
    });
  });
}

describe('compaction: a vendor refusal compacts and retries instead of failing (postgres)', () => {
  let openai: FakeLlmServer;
  let anthropic: FakeLlmServer;
  before(async () => {
    openai = await startFakeOpenAi({ api_key: KEY, respond: openAiResponder() });
    anthropic = await startFakeAnthropic({
      api_key: KEY,
      respond: (r) => ({ type: 'reply', reply: { text: [isCompaction(r) ? SUMMARY : 'ok'] } }),
    });
  });
  after(() => Promise.all([openai.close(), anthropic.close()]));

  const refusals = [
    {
      vendor: 'openai',
      fake: () => openai,
      path: '/v1/responses',
      baseUrl: () => `${openai.origin}/v1`,
      body: {
        error: {
          message: "This model's maximum context length is 128000 tokens.",
          type: 'invalid_request_error',
          param: 'input',
          code: 'context_length_exceeded',
        },
      },
    },
    {
      vendor: 'anthropic',
      fake: () => anthropic,
      path: '/v1/messages',
      baseUrl: () => anthropic.origin,
      body: { type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 210000 tokens > 200000 maximum' } },
    },
  ] as const;

  for (const c of refusals) {
    it(`${c.vendor}: "context length exceeded" → session.compacted (context_length) → the step runs again and the turn completes`, async (t) => {
      const app = await startTestApp(t, { mode: 'postgres' });
      const p = await createProvider(app, { provider_type: c.vendor, api_key: KEY, base_url: c.baseUrl() });
      const m = await addModel(app, p['id'], { model_id: `${c.vendor}-big`, context_window: 1_000_000 });
      const { id } = await createSession(app, { default_model_id: m['id'] });
      await turn(app, id, 'r1marker first', 1);
      await turn(app, id, 'r2marker second', 2);
      c.fake().enqueue({ type: 'error', status: 400, body: c.body });
      const events = await turn(app, id, 'r3marker third', 3);
      assert.ok(!events.some((e) => e.type === 'turn.failed'), events.map((e) => e.type).join(','));
      const compacted = events.find((e) => e.type === 'session.compacted');
      assert.equal(compacted?.data['reason'], 'context_length');
      const calls = c.fake().requests.filter((r) => r.url.startsWith(c.path));
      const retried = JSON.stringify(calls.at(-1)!.body);
      assert.ok(isCompaction(calls.at(-2)!), 'the summary was asked for between the refusal and the retry');
      assert.match(retried, /SUMMARY-ALPHA/);
      assert.match(retried, /r3marker/);
      assert.doesNotMatch(retried, /r1marker|r2marker/);
      assert.equal(events.filter((e) => e.type === 'output.message.completed').at(-1)?.data['message'].content[0].text, 'ok');
      if (c.vendor === 'anthropic') {
        // Prompt caching: the summary-led first message and the conversation's end are breakpoints.
        const { messages } = calls.at(-1)!.body;
        assert.match(messages[0].content[0].text, /SUMMARY-ALPHA/);
        assert.deepEqual(messages[0].content[0].cache_control, { type: 'ephemeral' });
        assert.deepEqual(messages.at(-1).content.at(-1).cache_control, { type: 'ephemeral' });
      }
    });
  }

  it('a refusal with nothing left to compact still fails the turn (llm_error), once', async (t) => {
    const app = await startTestApp(t, { mode: 'postgres' });
    const p = await createProvider(app, { provider_type: 'openai', api_key: KEY, base_url: `${openai.origin}/v1` });
    const m = await addModel(app, p['id'], { model_id: 'gpt-4o' });
    const { id } = await createSession(app, { default_model_id: m['id'] });
    openai.enqueue({ type: 'error', status: 400, body: refusals[0].body });
    const events = await turn(app, id, 'only message', 1);
    assert.equal(events.find((e) => e.type === 'turn.failed')?.data['error_code'], 'llm_error');
    assert.ok(!events.some((e) => e.type === 'session.compacted'));
  });
});

describe('compaction: cancel during compaction (postgres)', () => {
  let fake: FakeLlmServer;
  let slow = true;
  before(async () => {
    fake = await startFakeOpenAi({
      api_key: KEY,
      respond: openAiResponder(() => ({
        type: 'reply',
        reply: { text: ['SUMMARY', '-ALPHA', ' late'] },
        frame_delay_ms: slow ? 3_000 : 0,
      })),
    });
  });
  after(() => fake.close());

  it('POST cancel while the summary streams: turn.cancelled, no session.compacted; the next turn compacts', async (t) => {
    const app = await startTestApp(t, { mode: 'postgres' });
    const { id } = await openAiSession(app, fake, { model_id: 'gpt-4o', context_window: 1000 });
    await turn(app, id, filler('c1marker', 500), 1);
    assert.equal((await sendMessage(app, id, filler('c2marker', 500))).status, 201);
    const deadline = Date.now() + 15_000;
    while (!fake.requests.some(isCompaction) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.ok(fake.requests.some(isCompaction), 'the compaction began');
    const cancel = await app.request('POST', `/v1/sessions/${id}/cancel`);
    assert.equal(cancel.status, 200, cancel.text);
    let events = await waitForEvent(app, id, 'session.idled', { n: 2 });
    assert.ok(
      events.some((e) => e.type === 'turn.cancelled'),
      events.map((e) => e.type).join(','),
    );
    assert.ok(!events.some((e) => e.type === 'session.compacted'));
    slow = false;
    events = await turn(app, id, 'c3marker', 3);
    assert.equal(events.filter((e) => e.type === 'session.compacted').length, 1);
    assertLogIntegrity(await listEvents(app, id));
  });
});
