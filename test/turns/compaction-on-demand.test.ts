/**
 * POST /v1/sessions/{id}/compact (issue 26, docs/decisions/0103): a compaction turn through the
 * official OpenAI SDK against the wire fake, followed over SSE; cancel during the summary call;
 * the request's checks. Both modes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startFakeOpenAi } from '../llm/fakes/openai.js';
import type { FakeLlmServer, FakeStep, RecordedRequest } from '../llm/fakes/fake-server.js';
import { addModel, createCaller, createProvider } from '../api/llm-providers/helpers.js';
import { startTestApp, type TestApp, type TestMode } from '../helpers/app.js';
import { assertLogIntegrity, createSession, listEvents, sendMessage, typesOf, waitForEvent, watch, type StoredEvent } from './helpers.js';

const KEY = 'test-key';
const SUMMARY = 'SUMMARY-BRAVO the user sent two notes';
const isCompaction = (r: RecordedRequest) => JSON.stringify(r.body ?? '').includes('You compact the history');
const generations = (fake: FakeLlmServer) => fake.requests.filter((r) => r.url.startsWith('/v1/responses') && !isCompaction(r));

/** Summaries for compaction requests (slow while `slow()`, and not before `held()` settles), else a short reply. */
function responder(slow: () => boolean, held: () => Promise<void> | undefined = () => undefined) {
  return (r: RecordedRequest): FakeStep =>
    isCompaction(r)
      ? {
          type: 'reply',
          reply: { text: ['SUMMARY-BRAVO', ' the user sent two notes'] },
          frame_delay_ms: slow() ? 2_000 : 0,
          after: held(),
        }
      : { type: 'reply', reply: { text: ['ok'] } };
}

async function openAiSession(app: TestApp, fake: FakeLlmServer): Promise<string> {
  const p = await createProvider(app, { provider_type: 'openai', api_key: KEY, base_url: `${fake.origin}/v1` });
  const m = await addModel(app, p['id'], { model_id: 'gpt-4o' });
  return (await createSession(app, { default_model_id: m['id'] })).id;
}

async function turn(app: TestApp, id: string, text: string, n: number): Promise<StoredEvent[]> {
  const sent = await sendMessage(app, id, text);
  assert.equal(sent.status, 201, sent.text);
  return waitForEvent(app, id, 'session.idled', { n });
}

function compact(app: TestApp, id: string, body: unknown = {}) {
  return app.request('POST', `/v1/sessions/${id}/compact`, { body });
}

for (const mode of ['pglite', 'nats'] as const satisfies TestMode[]) {
  describe(`compaction on demand (${mode})`, () => {
    let fake: FakeLlmServer;
    let slow = false;
    let held: Promise<void> | undefined;
    before(async () => {
      fake = await startFakeOpenAi({
        api_key: KEY,
        respond: responder(
          () => slow,
          () => held,
        ),
      });
    });
    after(() => fake.close());

    it('POST compact → 202; the compaction turn streams over SSE; the next turn starts from the summary', async (t) => {
      const app = await startTestApp(t, { mode });
      const id = await openAiSession(app, fake);
      await turn(app, id, 'n1marker first note', 1);
      await turn(app, id, 'n2marker second note', 2);
      const sse = await watch(app, id);
      t.after(() => sse.close());
      // The summary call waits until the status is read: a loaded CI once finished the compaction first.
      let release!: () => void;
      held = new Promise<void>((resolve) => (release = resolve));
      t.after(() => {
        release();
        held = undefined;
      });

      const r = await compact(app, id, { instructions: 'Keep every number.' });
      assert.equal(r.status, 202, r.text);
      assert.equal(r.body.session_id, id);
      assert.equal(r.body.status, 'active');
      const turnId: string = r.body.turn_id;
      assert.equal((await app.request('GET', `/v1/sessions/${id}`)).body.status, 'active', 'the session shows the compaction at once');
      release();

      const seen = await sse.until('session.idled', 3);
      assert.deepEqual(typesOf(seen, turnId), [
        'turn.started',
        'session.activated',
        'session.compacted',
        'turn.completed',
        'session.idled',
      ]);
      const started = seen.find((e) => e.type === 'turn.started' && e.context['turn_id'] === turnId)!;
      assert.equal(started.data['kind'], 'compaction');
      assert.equal(started.data['input_message_id'], turnId, 'a compaction answers no message');
      const compacted = seen.find((e) => e.type === 'session.compacted')!;
      assert.equal(compacted.data['reason'], 'manual');
      assert.equal(compacted.data['summary'], SUMMARY);
      assert.equal(compacted.data['model'], 'gpt-4o');
      assert.ok(compacted.data['usage'].input_tokens > 0, 'the summary call is accounted');
      const completed = seen.find((e) => e.type === 'turn.completed' && e.context['turn_id'] === turnId)!;
      assert.deepEqual(completed.data['usage'], compacted.data['usage'], "the turn's usage is its summary call");
      // Everything but the newest entry (the second reply) was summarised, with the instructions.
      const boundary = seen.find((e) => e.id === compacted.data['up_to_event_id'])!;
      assert.equal(boundary.type, 'input.message');
      assert.match(JSON.stringify(boundary.data), /n2marker/);
      const summaryCall = fake.requests.filter(isCompaction).at(-1)!;
      assert.match(summaryCall.body.instructions, /Also: Keep every number\./);
      assert.match(JSON.stringify(summaryCall.body.input), /n1marker[\s\S]*n2marker/);

      const events = await turn(app, id, 'n3marker third note', 4);
      const sent = JSON.stringify(generations(fake).at(-1)!.body);
      assert.match(sent, /SUMMARY-BRAVO/);
      assert.match(sent, /n3marker/);
      assert.doesNotMatch(sent, /n1marker|n2marker/, 'the summarised turns are not sent again');
      assert.ok(!events.some((e) => e.type === 'turn.failed'));
      assertLogIntegrity(events);
    });

    it('a second compaction right after the first has nothing to compact: turn.failed nothing_to_compact, the session stays usable', async (t) => {
      const metricsToken = 'metrics-token-0123456789abcdef';
      const app = await startTestApp(t, { mode, env: { METRICS_TOKEN: metricsToken } });
      const id = await openAiSession(app, fake);
      await turn(app, id, 'one', 1);
      assert.equal((await compact(app, id)).status, 202);
      await waitForEvent(app, id, 'session.idled', { n: 2 });
      const again = await compact(app, id);
      assert.equal(again.status, 202, again.text);
      const events = await waitForEvent(app, id, 'session.idled', { n: 3 });
      const failed = events.find((e) => e.type === 'turn.failed')!;
      assert.equal(failed.data['error_code'], 'nothing_to_compact');
      assert.equal(failed.context['turn_id'], again.body.turn_id);
      assert.equal(events.filter((e) => e.type === 'session.compacted').length, 1);
      const metrics = await (await fetch(`${app.url}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } })).text();
      assert.match(metrics, /turns_failed_total\{error_code="nothing_to_compact"\} 1\n/, 'counted under its own code');
      await turn(app, id, 'two', 4);
    });

    it('POST cancel during the summary call: turn.cancelled (spec 3.2 flow), no session.compacted; history unchanged', async (t) => {
      const app = await startTestApp(t, { mode });
      const id = await openAiSession(app, fake);
      await turn(app, id, 'k1marker first', 1);
      await turn(app, id, 'k2marker second', 2);
      slow = true;
      t.after(() => (slow = false));
      const before = fake.requests.filter(isCompaction).length;
      const r = await compact(app, id);
      assert.equal(r.status, 202, r.text);
      const deadline = Date.now() + 15_000;
      while (fake.requests.filter(isCompaction).length === before && Date.now() < deadline) await new Promise((s) => setTimeout(s, 20));
      assert.ok(fake.requests.filter(isCompaction).length > before, 'the summary call began');
      const busy = await sendMessage(app, id, 'while compacting');
      assert.equal(busy.status, 409, 'a compaction holds the session like a turn');
      const cancel = await app.request('POST', `/v1/sessions/${id}/cancel`);
      assert.equal(cancel.status, 200, cancel.text);
      assert.equal(cancel.body.status, 'cancelled');
      const events = await waitForEvent(app, id, 'session.idled', { n: 3 });
      assert.deepEqual(typesOf(events, r.body.turn_id), [
        'turn.started',
        'session.activated',
        'turn.cancelled',
        'input.message',
        'output.message.completed',
        'session.idled',
      ]);
      assert.ok(!events.some((e) => e.type === 'session.compacted'), 'a cancelled compaction stores no summary');
      slow = false;
      await turn(app, id, 'k3marker third', 4);
      assert.match(JSON.stringify(generations(fake).at(-1)!.body), /k1marker[\s\S]*k2marker[\s\S]*k3marker/, 'nothing was summarised');
      assertLogIntegrity(await listEvents(app, id));
    });
  });
}

describe('compaction on demand: what the request is checked for (postgres)', () => {
  let fake: FakeLlmServer;
  let slow = false;
  before(async () => {
    fake = await startFakeOpenAi({ api_key: KEY, respond: responder(() => slow) });
  });
  after(() => fake.close());

  it('bad bodies 400, an unknown session 404, another user’s 403, no messages yet or busy 409; nothing is written', async (t) => {
    const app = await startTestApp(t, { mode: 'postgres' });
    const id = await openAiSession(app, fake);
    const created = await listEvents(app, id);
    const fresh = await compact(app, id);
    assert.equal(fresh.status, 409, fresh.text);
    assert.match(fresh.body.error, /no messages yet/);
    for (const body of [{ instructions: '' }, { instructions: 'x'.repeat(2_001) }, { instructions: 7 }, { other: 1 }]) {
      const r = await compact(app, id, body);
      assert.equal(r.status, 400, `${JSON.stringify(body).slice(0, 40)}: ${r.text}`);
      assert.equal(r.body.status, 400);
    }
    assert.equal((await compact(app, '019a0000-0000-7000-8000-000000000099')).status, 404);
    const member = await createCaller(app, 'member');
    assert.equal(
      (await member.request('POST', `/v1/sessions/${id}/compact`, { body: {} })).status,
      403,
      "a member on another user's session",
    );
    assert.deepEqual(await listEvents(app, id), created, 'refused requests write nothing');

    await turn(app, id, 'first', 1);
    slow = true;
    t.after(() => (slow = false));
    assert.equal((await compact(app, id)).status, 202);
    const busy = await compact(app, id);
    assert.equal(busy.status, 409, 'one compaction or turn at a time');
    slow = false;
    // The summary call began while slow: its frames stream 2 s apart (~12 s), past the default wait on a loaded CI.
    const events = await waitForEvent(app, id, 'session.idled', { n: 2, timeoutMs: 60_000 });
    assert.equal(events.filter((e) => e.type === 'turn.started').length, 2);
  });
});
