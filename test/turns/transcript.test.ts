import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { emptyTranscript, extendTranscript, MISSING_RESULT_TEXT, toLlmMessages } from '../../actors/session/log/transcript.js';
import { turnEvents, type TurnRef } from '../../src/turns/turn-events.js';
import type { NewSessionEvent, SessionEvent } from '../../schemas/events.js';

const turn: TurnRef = { turn_id: 't', input_message_id: 'm' };
const model = { model: 'm', model_id: null, provider_id: null };
const usage = { input_tokens: 2, output_tokens: 1, cache_read_tokens: 1 };

function stamp(events: NewSessionEvent[], from = 1): readonly SessionEvent[] {
  return events.map((e, i) => ({ ...e, id: `e${from + i}`, ts: '', session_id: 's', sequence: from + i, context: e.context ?? {} }));
}
const user = (text: string) =>
  turnEvents.inputMessage('i', { id: 'u', role: 'user', content: [{ type: 'text', text }], created_at: '' }, turn);
const agent = (text: string, calls: { id: string; name: string }[] = [], providerState?: string) =>
  turnEvents.outputCompleted('o', turn, {
    message: {
      id: 'a',
      role: 'agent',
      content: [...(text ? [{ type: 'text', text }] : []), ...calls.map((c) => ({ type: 'tool_call', ...c, arguments: { x: 1 } }))],
      created_at: '',
    },
    model,
    usage,
    ...(providerState ? { provider_state: providerState } : {}),
  });
const result = (id: string, text: string) =>
  turnEvents.toolSucceeded('r', turn, 'x', {
    call: { id, name: 'tool', arguments: {} },
    display_name: 'tool',
    result: [{ type: 'text', text }],
    duration_ms: 1,
  });
const noImage = async () => null;

describe('transcript', () => {
  it('rebuilds user, assistant (with tool calls and provider state) and tool messages in order', async () => {
    const t = extendTranscript(
      emptyTranscript(),
      stamp([user('hi'), agent('let me see', [{ id: 'c1', name: 'tool' }], 'sig'), result('c1', 'done'), agent('finished')]),
    );
    assert.deepEqual(await toLlmMessages(t, noImage), [
      { role: 'user', content: [{ type: 'text', text: 'hi' }] },
      { role: 'assistant', content: 'let me see', tool_calls: [{ id: 'c1', name: 'tool', arguments: { x: 1 } }], provider_state: 'sig' },
      { role: 'tool', tool_call_id: 'c1', name: 'tool', content: 'done', is_error: false },
      { role: 'assistant', content: 'finished' },
    ]);
  });

  it('keeps a result right after its call even when a cancel message was logged in between', async () => {
    const t = extendTranscript(
      emptyTranscript(),
      stamp([user('go'), agent('', [{ id: 'c1', name: 'tool' }]), user('User requested to cancel the work.'), result('c1', 'late')]),
    );
    const roles = (await toLlmMessages(t, noImage)).map((m) => m.role);
    assert.deepEqual(roles, ['user', 'assistant', 'tool', 'user']);
  });

  it('gives a call without a stored result a synthetic error result', async () => {
    const t = extendTranscript(emptyTranscript(), stamp([user('go'), agent('', [{ id: 'c1', name: 'tool' }])]));
    const last = (await toLlmMessages(t, noImage)).at(-1);
    assert.deepEqual(last, { role: 'tool', tool_call_id: 'c1', name: 'tool', content: MISSING_RESULT_TEXT, is_error: true });
  });

  it('sums llm.generation usage, and folding the same events twice changes nothing', () => {
    const gen = turnEvents.llmGeneration('g', turn, { iteration: 1, model, usage, stop_reason: 'end_turn', duration_ms: 1 });
    const events = stamp([user('a'), gen, gen]);
    const once = extendTranscript(emptyTranscript(), events);
    const twice = extendTranscript(once, events);
    assert.deepEqual(once.usage, { input_tokens: 4, output_tokens: 2, cache_read_tokens: 2 });
    assert.deepEqual(twice.usage, once.usage);
    assert.equal(twice.entries.length, 1);
  });

  it('skips steps whose output never completed (an interrupted stream leaves no message)', async () => {
    const t = extendTranscript(
      emptyTranscript(),
      stamp([user('a'), turnEvents.reasonStarted('r', turn, 1), turnEvents.outputDelta('d', turn, 'par')]),
    );
    assert.equal((await toLlmMessages(t, noImage)).length, 1);
  });
  it('folds made one event at a time, read in any order, give what one fold of the same events gives', async () => {
    const events = stamp([
      user('a'),
      agent('', [{ id: 'c1', name: 'tool' }]),
      user('User requested to cancel the work.'),
      result('c1', 'late'),
      agent('then'),
      user('b'),
      agent('two', [
        { id: 'c2', name: 'tool' },
        { id: 'c3', name: 'tool' },
      ]),
      result('c3', 'three'),
      result('c2', 'two'),
      agent('done'),
      user('c'),
      agent('', [{ id: 'c4', name: 'tool' }]),
      result('c4', 'four'),
      agent('end'),
    ]);
    const folds = [emptyTranscript()];
    for (const e of events) folds.push(extendTranscript(folds.at(-1)!, [e]));
    // Every third fold forwards (each built from one before it), then all of them backwards.
    const order = [...folds.keys()].filter((i) => i % 3 === 2);
    order.push(...[...folds.keys()].reverse());
    for (const i of order) {
      const once = extendTranscript(emptyTranscript(), events.slice(0, i));
      assert.deepEqual(await toLlmMessages(folds[i]!, noImage), await toLlmMessages(once, noImage), `fold ${i}`);
    }
  });
});
