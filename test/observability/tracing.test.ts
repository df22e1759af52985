import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createIdTracing, otlpTracesUrl, parseTraceparent } from '../../src/observability/tracing.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { natsServiceEnv } from '../helpers/nats-server.js';
import { startOtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.js';
import { createSession, listEvents, waitForEvent, type StoredEvent } from '../turns/helpers.js';
import { spawnWorker } from '../turns/worker-process.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const HEX16 = /^[0-9a-f]{16}$/;

/** A turn with one tool call: reason (tool call) → act (get_current_time) → reason (summary). */
async function toolTurn(app: TestApp, headers: Record<string, string> = {}): Promise<{ sessionId: string; events: StoredEvent[] }> {
  const { id } = await createSession(app, { capabilities: ['current_time'] });
  const r = await app.request('POST', `/v1/sessions/${id}/messages`, {
    headers,
    body: { message: { content: [{ type: 'text', text: '@tool get_current_time {}' }] } },
  });
  assert.equal(r.status, 201, r.text);
  await waitForEvent(app, id, 'session.idled', { timeoutMs: 30_000 });
  const events = await listEvents(app, id);
  return { sessionId: id, events: events.filter((e) => e.context['turn_id']) };
}

const ofType = (events: StoredEvent[], type: string) => events.filter((e) => e.type === type);
const one = (events: StoredEvent[], type: string) => {
  const list = ofType(events, type);
  assert.equal(list.length, 1, `one ${type}`);
  return list[0]!;
};

/**
 * The span tree the events describe: the request's span (preamble) → the turn's span (turn-level
 * events) → a reason span per LLM call and an act span → a tool span per execution.
 */
function assertEventSpanTree(events: StoredEvent[], traceId: string, callerSpan: string | undefined): { request: string; turn: string } {
  for (const e of events) {
    assert.equal(e.context['trace_id'], traceId, `${e.type} trace_id`);
    assert.match(e.context['span_id']!, HEX16, `${e.type} span_id`);
  }
  const request = one(events, 'turn.started').context;
  assert.equal(one(events, 'input.message').context['span_id'], request['span_id']);
  assert.equal(request['parent_span_id'], callerSpan);
  const turn = one(events, 'turn.completed').context;
  assert.equal(turn['parent_span_id'], request['span_id'], 'the turn span is a child of the request span');
  assert.equal(one(events, 'session.idled').context['span_id'], turn['span_id']);
  const reasons = ofType(events, 'reason.started').map((e) => e.context);
  assert.equal(reasons.length, 2);
  assert.notEqual(reasons[0]!['span_id'], reasons[1]!['span_id'], 'one span per reason step');
  for (const r of reasons) assert.equal(r['parent_span_id'], turn['span_id']);
  for (const type of ['output.message.started', 'output.message.completed', 'llm.generation', 'reason.completed']) {
    assert.deepEqual(
      new Set(ofType(events, type).map((e) => e.context['span_id'])),
      new Set(reasons.map((r) => r['span_id'])),
      `${type} carries its reason span`,
    );
  }
  const act = one(events, 'act.started').context;
  assert.equal(act['parent_span_id'], turn['span_id']);
  assert.equal(one(events, 'act.completed').context['span_id'], act['span_id']);
  const started = one(events, 'tool.started').context;
  const completed = one(events, 'tool.completed').context;
  assert.equal(started['span_id'], completed['span_id'], 'tool.started and tool.completed share the tool span');
  assert.equal(started['parent_span_id'], act['span_id']);
  assert.notEqual(started['span_id'], act['span_id']);
  return { request: request['span_id']!, turn: turn['span_id']! };
}

describe('tracing', () => {
  it('parses W3C traceparent and refuses malformed or all-zero ones', () => {
    assert.deepEqual(parseTraceparent(`00-${TRACE}-${CALLER_SPAN}-01`), { traceId: TRACE, spanId: CALLER_SPAN, sampled: true });
    assert.equal(parseTraceparent(`00-${TRACE}-${CALLER_SPAN}-00`)?.sampled, false);
    assert.equal(parseTraceparent(`00-${'0'.repeat(32)}-${CALLER_SPAN}-01`), undefined);
    assert.equal(parseTraceparent(`00-${TRACE}-${'0'.repeat(16)}-01`), undefined);
    assert.equal(parseTraceparent(`00-${TRACE.toUpperCase()}-${CALLER_SPAN}-01`), undefined);
    assert.equal(parseTraceparent(`00-${TRACE}-${CALLER_SPAN}-01-extra`), undefined);
    assert.equal(parseTraceparent(`01-${TRACE}-${CALLER_SPAN}-01-future`)?.traceId, TRACE);
    assert.equal(parseTraceparent('garbage'), undefined);
    assert.equal(otlpTracesUrl('http://c:4318/', undefined), 'http://c:4318/v1/traces');
    assert.equal(otlpTracesUrl('http://c:4318', 'http://t/x'), 'http://t/x');
    assert.equal(otlpTracesUrl(undefined, undefined), undefined);
  });

  it('export off: spans are id holders with W3C ids and parent links', () => {
    const tracing = createIdTracing();
    assert.equal(tracing.exporting, false);
    const root = tracing.startSpan('a', { parent: `00-${TRACE}-${CALLER_SPAN}-01` });
    assert.equal(root.traceId, TRACE);
    assert.equal(root.parentSpanId, CALLER_SPAN);
    const child = root.child('b');
    assert.equal(child.parentSpanId, root.spanId);
    assert.equal(child.traceparent(), `00-${TRACE}-${child.spanId}-01`);
    const fresh = tracing.startSpan('c');
    assert.match(fresh.traceId, /^[0-9a-f]{32}$/);
    assert.equal(fresh.parentSpanId, undefined);
    const ctx: Record<string, string> = {};
    child.stamp(ctx);
    assert.deepEqual(ctx, { trace_id: TRACE, span_id: child.spanId, parent_span_id: root.spanId });
    assert.equal(
      tracing.run(child, () => tracing.active()),
      child,
    );
    assert.equal(tracing.active(), undefined);
  });

  it('export off (embedded): every event of a turn carries trace ids; an incoming traceparent is honoured', async (t) => {
    const app = await startTestApp(t, { mode: 'pglite' });
    const { events } = await toolTurn(app, { traceparent: `00-${TRACE}-${CALLER_SPAN}-01` });
    assertEventSpanTree(events, TRACE, CALLER_SPAN);
    // Without a traceparent each request starts a trace of its own.
    const second = await toolTurn(app);
    const traceId = second.events[0]!.context['trace_id']!;
    assert.match(traceId, /^[0-9a-f]{32}$/);
    assert.notEqual(traceId, TRACE);
    assertEventSpanTree(second.events, traceId, undefined);
  });

  it('export off: client tool results and a cancel carry their request’s ids; the resumed turn is a child of the results request', async (t) => {
    const app = await startTestApp(t, { mode: 'pglite' });
    const askUser = { type: 'client', name: 'ask_user', description: 'Ask the user.', parameters: { type: 'object', properties: {} } };
    const { id } = await createSession(app, { client_tools: [askUser] });
    const send = (text: string, traceId: string) =>
      app.request('POST', `/v1/sessions/${id}/messages`, {
        headers: { traceparent: `00-${traceId}-${CALLER_SPAN}-01` },
        body: { message: { content: [{ type: 'text', text }] } },
      });
    assert.equal((await send('@tool ask_user {}', TRACE)).status, 201);
    const requested = (await waitForEvent(app, id, 'tool.call_requested')).find((e) => e.type === 'tool.call_requested')!;
    assert.equal(requested.context['trace_id'], TRACE);
    const resultsTrace = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
    for (let i = 0; i < 100 && (await app.request('GET', `/v1/sessions/${id}`)).body.status !== 'waiting_for_tool_results'; i++)
      await new Promise((r) => setTimeout(r, 50));
    const r = await app.request('POST', `/v1/sessions/${id}/tool-results`, {
      headers: { traceparent: `00-${resultsTrace}-${CALLER_SPAN}-01` },
      body: { tool_results: [{ tool_call_id: requested.data['tool_calls'][0].id, result: 'blue' }] },
    });
    assert.equal(r.status, 200, r.text);
    const events = await waitForEvent(app, id, 'session.idled');
    const result = events.find((e) => e.type === 'tool.completed')!;
    assert.equal(result.context['trace_id'], resultsTrace);
    assert.equal(result.context['parent_span_id'], CALLER_SPAN);
    const completed = one(events, 'turn.completed');
    assert.equal(completed.context['trace_id'], resultsTrace, 'the resumed attempt continues the results request’s trace');
    assert.equal(completed.context['parent_span_id'], result.context['span_id']);

    const cancelTrace = 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';
    assert.equal((await send('@sleep 20000', TRACE)).status, 201);
    await waitForEvent(app, id, 'reason.started', { n: 3 });
    const c = await app.request('POST', `/v1/sessions/${id}/cancel`, { headers: { traceparent: `00-${cancelTrace}-${CALLER_SPAN}-01` } });
    assert.equal(c.status, 200, c.text);
    const after = await waitForEvent(app, id, 'session.idled', { n: 2 });
    const cancelled = one(after, 'turn.cancelled');
    assert.equal(cancelled.context['trace_id'], cancelTrace);
    assert.equal(cancelled.context['parent_span_id'], CALLER_SPAN);
    for (const e of after.filter((x) => x.sequence > cancelled.sequence))
      assert.match(e.context['trace_id']!, /^[0-9a-f]{32}$/, `${e.type} has a trace id`);
  });

  it('export on (nats): one turn’s spans cross from the API process to a worker process with correct parents, and match the events', async (t) => {
    const otlp = await startOtlpReceiver(t);
    const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_BSP_SCHEDULE_DELAY: '100' };
    const api = await startTestApp(t, { mode: 'nats', env: { ROLE: 'api', ...otel } });
    const worker = spawnWorker('tracer', { DATABASE_URL: api.databaseUrl!, ...natsServiceEnv(api.natsUrl!), ...otel }, t);
    await worker.waitForLog((l) => l.msg === 'turn worker started', 90_000);
    const { events } = await toolTurn(api, { traceparent: `00-${TRACE}-${CALLER_SPAN}-01` });
    const ids = assertEventSpanTree(events, TRACE, CALLER_SPAN);

    const inTrace = (spans: ReceivedSpan[]) => spans.filter((s) => s.traceId === TRACE);
    const spans = inTrace(
      await otlp.until(
        (all) =>
          inTrace(all).filter((s) => ['turn', 'reason', 'act'].includes(s.name) || s.name.startsWith('tool ') || s.name.startsWith('POST '))
            .length >= 6,
        20_000,
      ),
    );
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const request = byId.get(ids.request)!;
    assert.equal(request.name, 'POST /v1/sessions/:id/messages');
    assert.equal(request.parentSpanId, CALLER_SPAN);
    assert.equal(request.resource['service.role'], 'api');
    assert.equal(request.kind, 2, 'SERVER');
    assert.equal(request.attributes['http.response.status_code'], 201);
    const turn = byId.get(ids.turn)!;
    assert.equal(turn.name, 'turn');
    assert.equal(turn.parentSpanId, request.spanId, 'the worker process continues the API process’s trace');
    assert.equal(turn.resource['service.role'], 'worker');
    assert.equal(turn.resource['service.instance.id'], 'tracer');
    const reasons = spans.filter((s) => s.name === 'reason');
    assert.equal(reasons.length, 2);
    for (const r of reasons) assert.equal(r.parentSpanId, turn.spanId);
    assert.equal(reasons[0]!.attributes['gen_ai.request.model'], 'llmsim');
    assert.equal(typeof reasons[0]!.attributes['gen_ai.usage.output_tokens'], 'number');
    const act = spans.find((s) => s.name === 'act')!;
    assert.equal(act.parentSpanId, turn.spanId);
    const tool = spans.find((s) => s.name === 'tool get_current_time')!;
    assert.equal(tool.parentSpanId, act.spanId);
    // Every event's span was exported, with the parent the event names.
    for (const e of events) {
      const s = byId.get(e.context['span_id']!);
      assert.ok(s, `span of ${e.type} exported`);
      assert.equal(s.parentSpanId, e.context['parent_span_id'], `${e.type} parent_span_id`);
    }
  });
});
