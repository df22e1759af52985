import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EVENT_TYPES } from '../../schemas/event-types.js';
import { createConsoleSite } from '../../src/console/site.js';

/** The console's browser modules that need no DOM, imported as plain ES modules. */
const load = (path: string) => import(new URL(`../../console/${path}`, import.meta.url).href);

describe('console modules', () => {
  it('the console knows every event type of the service (EventSource needs a listener per type)', async () => {
    const reply = createConsoleSite({ apiPrefix: '' }).reply('GET', '/console/lib/event-types.js', undefined);
    assert.ok(reply && 'raw' in reply, 'the module is served');
    assert.equal(reply.contentType, 'text/javascript; charset=utf-8');
    const { EVENT_TYPES: consoleTypes } = await import(`data:text/javascript,${encodeURIComponent(String(reply.raw))}`);
    assert.deepEqual(consoleTypes, [...EVENT_TYPES]);
  });

  it('foldTranscript: replies from deltas, tool calls with results, waiting client tools, cancellation', async () => {
    const { foldTranscript } = await load('lib/transcript.js');
    let n = 0;
    const ev = (type: string, data: Record<string, unknown> = {}) => ({ id: `e${++n}`, type, data });
    const events = [
      ev('input.message', { message: { content: [{ type: 'text', text: 'hi' }] } }),
      ev('turn.started'),
      ev('output.message.started'),
      ev('reason.thinking.delta', { delta: 'hmm' }),
      ev('output.message.delta', { delta: 'Hel' }),
      ev('output.message.delta', { delta: 'lo' }),
    ];
    let view = foldTranscript(events);
    assert.equal(view.running, true);
    assert.deepEqual(
      view.items.map((i: { kind: string }) => i.kind),
      ['user', 'agent'],
    );
    assert.deepEqual(
      { text: view.items[1].text, thinking: view.items[1].thinking, streaming: view.items[1].streaming },
      { text: 'Hello', thinking: 'hmm', streaming: true },
    );

    events.push(
      ev('output.message.completed', {
        message: {
          content: [
            { type: 'text', text: 'Hello' },
            { type: 'tool_call', id: 'c1', name: 'get_current_time', arguments: {} },
            { type: 'tool_call', id: 'c2', name: 'ask_user', arguments: { q: '?' } },
          ],
        },
      }),
      ev('tool.call_requested', { tool_calls: [{ id: 'c2', name: 'ask_user', arguments: { q: '?' } }] }),
      ev('tool.started', { tool_call: { id: 'c1', name: 'get_current_time', arguments: {} } }),
      ev('tool.completed', { tool_call_id: 'c1', tool_name: 'get_current_time', success: true, result: [{ type: 'text', text: '12:00' }] }),
    );
    view = foldTranscript(events);
    assert.equal(view.items[1].streaming, false);
    const tools = view.items.filter((i: { kind: string }) => i.kind === 'tool');
    assert.deepEqual(
      tools.map((t: { id: string; status: string; result: string | null }) => [t.id, t.status, t.result]),
      [
        ['c1', 'success', '12:00'],
        ['c2', 'waiting', null],
      ],
    );
    assert.deepEqual(
      view.waiting.map((t: { id: string }) => t.id),
      ['c2'],
    );

    events.push(ev('turn.cancelled'));
    view = foldTranscript(events);
    assert.equal(view.running, false);
    assert.deepEqual(view.waiting, []);
    assert.equal(view.items.at(-1).text, 'Turn cancelled');
  });

  it('backoffDelay: a quick first retry, doubling to a cap, spread ±50% by jitter', async () => {
    const { backoffDelay, FIRST_RETRY_MS, MAX_BACKOFF_MS } = await load('lib/backoff.js');
    assert.deepEqual(
      [0, 1, 2, 3].map((n) => backoffDelay(n, 0.5)),
      [FIRST_RETRY_MS, FIRST_RETRY_MS * 2, FIRST_RETRY_MS * 4, FIRST_RETRY_MS * 8],
    );
    assert.equal(backoffDelay(2, 0), FIRST_RETRY_MS * 2, 'half the base at the low end');
    assert.equal(backoffDelay(2, 0.999_999), Math.round(FIRST_RETRY_MS * 4 * 1.499_999), 'half again at the high end');
    assert.equal(backoffDelay(40, 0.5), MAX_BACKOFF_MS, 'capped');
    const spread = new Set(Array.from({ length: 20 }, () => backoffDelay(3)));
    assert.ok(spread.size > 10, 'two tabs do not retry in step');
  });

  it('turnSummary: time, tokens and model of a finished turn', async () => {
    const { foldTranscript, turnSummary } = await load('lib/transcript.js');
    const view = foldTranscript([
      { id: 'a', type: 'turn.started', data: {} },
      {
        id: 'b',
        type: 'output.message.completed',
        data: { message: { content: [] }, usage: { input_tokens: 12, output_tokens: 5 }, metadata: { model: 'sim' } },
      },
      {
        id: 'c',
        type: 'output.message.completed',
        data: { message: { content: [] }, usage: { input_tokens: 20, output_tokens: 7 }, metadata: { model: 'sim' } },
      },
      { id: 'd', type: 'turn.completed', data: { duration_ms: 1530, iterations: 2 } },
    ]);
    assert.equal(turnSummary(view.items.at(-1)), '1.5 s · 32 in / 12 out tokens · sim');
  });
});
