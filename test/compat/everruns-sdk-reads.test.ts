import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { SessionEvent } from '../../schemas/events.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import type { NewLoggedEvent } from '../../src/bus/index.js';
import { rawLog } from '../helpers/raw-log.js';

/**
 * Issue 17 items 5-7: the reads of the earlier public API's TypeScript SDK (everruns/sdk v0.2.1,
 * typescript/src/client.ts and sse.ts), replayed as it sends them: the raw key as
 * `Authorization`, `Content-Type: application/json` on every call, paths under `/v1`, its query
 * keys in its order. Each test asserts what the SDK would read back.
 */

class SdkHttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(`HTTP ${status}: ${body}`);
  }
}

/** The SDK's `fetch`: JSON headers first, the call's own headers over them; !ok throws, 204 is undefined. */
async function sdkFetch(app: TestApp, path: string, init: RequestInit = {}): Promise<any> {
  const res = await fetch(`${app.url}/v1${path}`, {
    ...init,
    headers: { Authorization: app.adminKey, 'Content-Type': 'application/json', ...(init.headers as Record<string, string> | undefined) },
  });
  if (!res.ok) throw new SdkHttpError(res.status, await res.text());
  return res.status === 204 ? undefined : res.json();
}

async function sdkStatus(call: Promise<unknown>): Promise<number> {
  try {
    await call;
    return 200;
  } catch (err) {
    if (err instanceof SdkHttpError) return err.status;
    throw err;
  }
}

interface ListEventsOptions {
  sinceId?: string;
  types?: string[];
  limit?: number;
  beforeSequence?: number;
  afterSequence?: number;
  around?: string;
  window?: number;
  fromTs?: string;
  toTs?: string;
  turnId?: string;
  execId?: string;
  traceId?: string;
  toolName?: string;
  q?: string;
  orderDesc?: boolean;
}

/** The query string of the SDK's `events.list`, keys in the order it sets them. */
function eventsQuery(o: ListEventsOptions): string {
  const p = new URLSearchParams();
  if (o.sinceId) p.set('since_id', o.sinceId);
  for (const t of o.types ?? []) p.append('types', t);
  if (o.limit != null) p.set('limit', String(o.limit));
  if (o.beforeSequence != null) p.set('before_sequence', String(o.beforeSequence));
  if (o.afterSequence != null) p.set('after_sequence', String(o.afterSequence));
  if (o.around) p.set('around', o.around);
  if (o.window != null) p.set('window', String(o.window));
  if (o.fromTs) p.set('from_ts', o.fromTs);
  if (o.toTs) p.set('to_ts', o.toTs);
  if (o.turnId) p.set('turn_id', o.turnId);
  if (o.execId) p.set('exec_id', o.execId);
  if (o.traceId) p.set('trace_id', o.traceId);
  if (o.toolName) p.set('tool_name', o.toolName);
  if (o.q) p.set('q', o.q);
  if (o.orderDesc !== undefined) p.set('order_desc', String(o.orderDesc));
  const s = p.toString();
  return s ? `?${s}` : '';
}

async function newSession(app: TestApp): Promise<string> {
  const agent = await sdkFetch(app, '/agents', {
    method: 'POST',
    body: JSON.stringify({ name: 'compat-agent', system_prompt: 'You help.' }),
  });
  return (await sdkFetch(app, '/sessions', { method: 'POST', body: JSON.stringify({ agent_id: agent.id }) })).id;
}

describe('clients of the earlier public API: reads and SSE (issue 17 items 5-7)', () => {
  // Both buses: the listing's backward pages are plain forward reads of each adapter.
  for (const mode of ['postgres', 'nats'] as const)
    it(`item 5 (${mode}): events.list honours every option the SDK sends; agents.list(search); capabilities.list(search, offset, limit)`, async (t) => {
      const app = await startTestApp(t, { mode });
      const sid = await newSession(app);
      const turn1 = crypto.randomUUID();
      const turn2 = crypto.randomUUID();
      const trace = crypto.randomUUID();
      const exec = crypto.randomUUID();
      const tool = (type: string, name: string, ctx: NewLoggedEvent['context'], data: Record<string, unknown>): NewLoggedEvent => ({
        type,
        context: ctx,
        data,
        tags: [`tool:${name}`],
      });
      // Two batches a little apart in time, so the timestamp bounds have something to cut.
      // Events of the catalogue's shapes (schemas/events.ts): the list reply is checked against it.
      const usage = { input_tokens: 1, output_tokens: 1, cache_read_tokens: 0 };
      const started = (turn: string, ctx: NewLoggedEvent['context']): NewLoggedEvent => ({
        type: 'turn.started',
        context: ctx,
        data: { turn_id: turn, input_message_id: turn },
      });
      const completed = (turn: string, ctx: NewLoggedEvent['context']): NewLoggedEvent => ({
        type: 'turn.completed',
        context: ctx,
        data: { turn_id: turn, iterations: 1, duration_ms: 1, usage },
      });
      const first = await rawLog(app.app.services.bus.events).append(sid, [
        started(turn1, { turn_id: turn1, trace_id: trace }),
        tool(
          'tool.started',
          'get_weather',
          { turn_id: turn1, exec_id: exec, trace_id: trace },
          { tool_call: { id: 'c1', name: 'get_weather', arguments: {} }, display_name: 'Weather' },
        ),
        tool(
          'tool.completed',
          'get_weather',
          { turn_id: turn1, exec_id: exec, trace_id: trace },
          {
            tool_call_id: 'c1',
            tool_name: 'get_weather',
            display_name: 'Weather',
            success: true,
            status: 'success',
            result: [],
            duration_ms: 1,
          },
        ),
        completed(turn1, { turn_id: turn1, trace_id: trace }),
      ]);
      assert.ok(first.ok);
      await sleep(30);
      const second = await rawLog(app.app.services.bus.events).append(sid, [
        started(turn2, { turn_id: turn2 }),
        {
          type: 'output.message.delta',
          context: { turn_id: turn2 },
          data: { turn_id: turn2, delta: 'The Zanzibar archipelago', accumulated: 'The Zanzibar archipelago' },
        },
        tool(
          'tool.started',
          'search',
          { turn_id: turn2, exec_id: crypto.randomUUID() },
          { tool_call: { id: 'c2', name: 'search', arguments: {} }, display_name: 'Search' },
        ),
        completed(turn2, { turn_id: turn2 }),
      ]);
      assert.ok(second.ok);
      const all: SessionEvent[] = (await sdkFetch(app, `/sessions/${sid}/events`)).data;
      assert.deepEqual(
        all.map((e) => e.sequence),
        [1, 2, 3, 4, 5, 6, 7, 8, 9],
      );
      const seqs = async (o: ListEventsOptions) =>
        ((await sdkFetch(app, `/sessions/${sid}/events${eventsQuery(o)}`)).data as SessionEvent[]).map((e) => e.sequence);

      assert.deepEqual(await seqs({ afterSequence: 6 }), [7, 8, 9]);
      assert.deepEqual(await seqs({ afterSequence: 2, sinceId: all[4]!.id }), [6, 7, 8, 9], 'the stricter lower bound wins');
      assert.deepEqual(await seqs({ beforeSequence: 4 }), [1, 2, 3]);
      assert.deepEqual(
        await seqs({ beforeSequence: 8, limit: 2 }),
        [6, 7],
        'backward page: the last `limit` before the cursor, oldest first',
      );
      assert.deepEqual(await seqs({ limit: 3, orderDesc: true }), [9, 8, 7], 'newest first');
      assert.deepEqual(await seqs({ limit: 3, orderDesc: false }), [1, 2, 3]);
      assert.deepEqual(await seqs({ types: ['turn.started'], orderDesc: true, limit: 1 }), [6], 'the newest matching event');
      assert.deepEqual(await seqs({ turnId: turn2 }), [6, 7, 8, 9]);
      assert.deepEqual(await seqs({ execId: exec }), [3, 4]);
      assert.deepEqual(await seqs({ traceId: trace }), [2, 3, 4, 5]);
      assert.deepEqual(await seqs({ toolName: 'get_weather' }), [3, 4]);
      assert.deepEqual(await seqs({ toolName: 'search' }), [8]);
      assert.deepEqual(await seqs({ fromTs: second.events[0]!.ts }), [6, 7, 8, 9]);
      assert.deepEqual(await seqs({ toTs: first.events.at(-1)!.ts }), [1, 2, 3, 4, 5]);
      assert.deepEqual(await seqs({ q: 'zanzibar' }), [7], 'case-insensitive substring of the data');
      assert.deepEqual(await seqs({ around: all[4]!.id, window: 1 }), [4, 5, 6]);
      assert.deepEqual(await seqs({ around: all[0]!.id, window: 2 }), [1, 2, 3]);
      assert.deepEqual(await seqs({ turnId: crypto.randomUUID() }), []);

      // Options that cannot be honoured together are a 400, never a silent full listing.
      const status = (o: ListEventsOptions) => sdkStatus(sdkFetch(app, `/sessions/${sid}/events${eventsQuery(o)}`));
      assert.equal(await status({ around: all[4]!.id, sinceId: all[1]!.id }), 400);
      assert.equal(await status({ around: all[4]!.id, beforeSequence: 3 }), 400);
      assert.equal(await status({ window: 3 }), 400);
      assert.equal(await status({ around: crypto.randomUUID() }), 400);
      assert.equal(await status({ fromTs: 'yesterday' }), 400);
      assert.equal(await status({ fromTs: second.events[0]!.ts, toTs: first.events[0]!.ts }), 400);
      assert.equal(await status({ beforeSequence: 0 }), 400);
      assert.equal(await status({ window: 501, around: all[0]!.id }), 400);

      // agents.list({search}): case-insensitive, name or description.
      for (const [name, description] of [
        ['Weather Bot', 'forecasts'],
        ['Travel Planner', 'books trips; checks the WEATHER'],
        ['Chef', 'recipes'],
      ]) {
        await sdkFetch(app, '/agents', { method: 'POST', body: JSON.stringify({ name, system_prompt: 'p', description }) });
      }
      const agents = await sdkFetch(app, `/agents?search=${encodeURIComponent('weather')}`);
      // `agents` is the SDK's key (issue 17 item 1); `data` is ours.
      assert.deepEqual(
        (agents.agents ?? agents.data).map((a: { name: string }) => a.name),
        ['Weather Bot', 'Travel Planner'],
      );
      assert.equal(agents.total, 2);
      assert.equal((await sdkFetch(app, '/agents?search=nothing-like-it')).total, 0);

      // capabilities.list({search, offset, limit}) reads data, total, offset, limit.
      const every = await sdkFetch(app, '/capabilities');
      assert.deepEqual([every.offset, every.total], [0, every.data.length]);
      const page = await sdkFetch(app, '/capabilities?offset=1&limit=2');
      assert.deepEqual(
        page.data.map((c: { id: string }) => c.id),
        every.data.slice(1, 3).map((c: { id: string }) => c.id),
      );
      assert.deepEqual([page.total, page.offset, page.limit], [every.total, 1, 2]);
      const found = await sdkFetch(app, '/capabilities?search=SQL');
      assert.ok(found.data.length >= 1 && found.total < every.total, `search narrowed to ${found.total} of ${every.total}`);
      assert.equal(found.total, found.data.length);
      for (const c of found.data) assert.match(`${c.id} ${c.name} ${c.description}`, /sql/i);
      assert.equal(await sdkStatus(sdkFetch(app, '/capabilities?limit=101')), 400);
    });

  it('item 6: models.list/get read models with their provider; agents.importExample imports a shipped example, 404 for an unknown one', async (t) => {
    const app = await startTestApp(t);
    const provider = await app.request('POST', '/v1/llm-providers', {
      body: { name: 'Sim', provider_type: 'llmsim', api_key: 'sk-compat-0123456789' },
    });
    assert.equal(provider.status, 201);
    assert.equal((await app.request('POST', `/v1/llm-providers/${provider.body.id}/models`, { body: { model_id: 'llmsim' } })).status, 201);

    const models = await sdkFetch(app, '/models');
    assert.equal(models.total, 1);
    assert.deepEqual(models, (await app.request('GET', '/v1/llm-models')).body, 'the same listing as /v1/llm-models');
    const [model] = models.data;
    assert.deepEqual(
      [model.provider_id, model.provider_name, model.provider_type, model.model_id],
      [provider.body.id, 'Sim', 'llmsim', 'llmsim'],
    );
    assert.deepEqual(await sdkFetch(app, `/models/${model.id}`), model);
    assert.equal(await sdkStatus(sdkFetch(app, `/models/${crypto.randomUUID()}`)), 404);
    assert.equal((await fetch(`${app.url}/v1/models`)).status, 401, 'same auth as /v1/llm-models');

    // importExample: POST /agents/import?from-example=<name>, empty text/plain body.
    const importExample = (name: string) =>
      sdkFetch(app, `/agents/import?${new URLSearchParams({ 'from-example': name })}`, {
        method: 'POST',
        body: '',
        headers: { 'Content-Type': 'text/plain' },
      });
    const jokes = await importExample('dad-jokes-agent');
    assert.equal(jokes.name, 'Dad Jokes Agent');
    assert.match(jokes.system_prompt, /^You tell dad jokes\./);
    assert.deepEqual(await sdkFetch(app, `/agents/${jokes.id}`), jokes, 'stored like any imported agent');
    assert.equal(await sdkStatus(importExample('no-such-example')), 404);
    assert.equal(await sdkStatus(importExample('../agents/dad-jokes-agent')), 404);

    const catalogue = await sdkFetch(app, '/agent-examples');
    assert.ok(catalogue.total >= 3 && catalogue.total === catalogue.data.length);
    for (const example of catalogue.data) {
      const agent = await importExample(example.name);
      assert.deepEqual(
        [agent.name, agent.description, agent.tags],
        [example.agent_name, example.description, example.tags],
        `${example.name} imports`,
      );
    }
  });

  it('item 7: under load, `disconnecting` arrives in a network read of its own after a quiet gap, and the SDK reader loses no event', async (t) => {
    const QUIET_MS = 150;
    const app = await startTestApp(t, { env: { SSE_CYCLE_MS: 1000, SSE_CYCLE_QUIET_MS: QUIET_MS, SSE_HEARTBEAT_MS: 60_000 } });
    const sid = await newSession(app);
    // For 1.5 s, bursts of 12 events with 300 ms pauses (quiet moments); then one burst of 2.1 s,
    // longer than a cycle window, so the stream has to hold events back to find its quiet gap.
    let writing = true;
    const writer = (async () => {
      const started = performance.now();
      let n = 0;
      while (performance.now() - started < 3600) {
        await rawLog(app.app.services.bus.events).append(sid, [{ type: 'output.message.delta', data: { n: n++ } }]);
        await sleep(performance.now() - started < 1500 && n % 12 === 0 ? 300 : 10);
      }
      writing = false;
    })();

    // The SDK's EventStream: one reader.read() is one network read; its parser callback throws
    // on `disconnecting`, so events parsed earlier from the same read are never yielded, but
    // the last id it parsed is what it resumes from.
    const yielded: SessionEvent[] = [];
    const reads: { at: number; events: string[] }[] = [];
    let lastEventId: string | undefined;
    let graceful = 0;
    class GracefulDisconnect extends Error {}
    for (let attempt = 0; attempt < 50; attempt++) {
      const url = `${app.url}/v1/sessions/${sid}/sse${lastEventId ? `?since_id=${encodeURIComponent(lastEventId)}` : ''}`;
      const res = await fetch(url, { headers: { Authorization: app.adminKey, Accept: 'text/event-stream', 'Cache-Control': 'no-cache' } });
      assert.equal(res.status, 200);
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      const queue: SessionEvent[] = [];
      let names: string[] = [];
      const parser = createParser({
        onEvent: (m: EventSourceMessage) => {
          names.push(m.event ?? 'message');
          if (m.event === 'connected') return;
          if (m.event === 'disconnecting') throw new GracefulDisconnect();
          const e = JSON.parse(m.data) as SessionEvent;
          lastEventId = e.id;
          queue.push(e);
        },
      });
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          names = [];
          try {
            parser.feed(decoder.decode(value, { stream: true }));
          } finally {
            reads.push({ at: performance.now(), events: names });
          }
          while (queue.length) yielded.push(queue.shift()!);
          if (!writing && yielded.length > 0 && yielded.at(-1)!.sequence === (await app.app.services.bus.events.lastSequence(sid))) break;
        }
      } catch (err) {
        if (!(err instanceof GracefulDisconnect)) throw err;
        graceful++;
        await reader.cancel().catch(() => undefined);
        await sleep(100); // the retry_ms hint
        continue;
      }
      await reader.cancel().catch(() => undefined);
      break;
    }
    await writer;

    const last = await app.app.services.bus.events.lastSequence(sid);
    assert.deepEqual(
      yielded.map((e) => e.sequence),
      Array.from({ length: last }, (_, i) => i + 1),
      'every event exactly once, in order',
    );
    assert.ok(graceful >= 2, `the stream cycled ${graceful} times`);
    const cycles = reads.flatMap((r, i) => (r.events.includes('disconnecting') ? [i] : []));
    assert.equal(cycles.length, graceful);
    for (const i of cycles) {
      assert.deepEqual(reads[i]!.events, ['disconnecting'], 'a read of its own');
      const before = reads.slice(0, i).findLast((r) => r.events.some((e) => e !== 'connected'));
      // Client-side read times: the read before the gap can land late by this process's own event
      // loop jitter (server, writer and reader share it), which shortens the gap as measured here.
      // A stream that did not wait for quiet would cut inside a burst, milliseconds after an event.
      if (before)
        assert.ok(
          reads[i]!.at - before.at >= QUIET_MS * 0.5,
          `quiet gap of ${Math.round(reads[i]!.at - before.at)} ms before disconnecting`,
        );
    }
    const gaps = cycles.map((i) =>
      Math.round(reads[i]!.at - (reads.slice(0, i).findLast((r) => r.events.some((e) => e !== 'connected'))?.at ?? NaN)),
    );
    t.diagnostic(`${graceful} cycles over ${last} events; event-free gap before each disconnecting: ${gaps.join(', ')} ms`);
  });
});
