import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decideTurnStep, type DecideInput, type TurnDecision } from '../../src/turns/turn-decider.js';
import { foldTurn } from '../../src/turns/turn-state.js';
import { turnEvents, ZERO_USAGE, type ToolCallRef, type TurnRef } from '../../src/turns/turn-events.js';
import type { NewSessionEvent, SessionEvent } from '../../schemas/events.js';
import { dataOf } from '../helpers/raw-log.js';

const turn: TurnRef = { turn_id: '01900000-0000-7000-8000-00000000aaaa', input_message_id: '01900000-0000-7000-8000-00000000bbbb' };
const NOW = new Date('2026-01-01T00:00:10.000Z');
const model = { model: 'llmsim', model_id: 'llmsim', provider_id: 'llmsim' };

/** Given these events (stamped in order), when the decider runs, then this is the decision. */
function given(events: NewSessionEvent[], input: Partial<DecideInput> = {}): TurnDecision {
  let n = 0;
  const stored: SessionEvent[] = events.map((e) => ({
    ...e,
    id: e.id ?? `e${++n}`,
    ts: '2026-01-01T00:00:00.000Z',
    session_id: 's',
    sequence: ++n,
    context: e.context ?? {},
  }));
  let id = 0;
  return decideTurnStep(foldTurn(turn, stored), {
    maxIterations: 100,
    clientToolNames: new Set(),
    sessionUsage: ZERO_USAGE,
    model: null,
    now: NOW,
    newId: () => `id${++id}`,
    ...input,
  });
}

const started = [turnEvents.turnStarted('t', turn), turnEvents.sessionActivated('a', turn)];
const usage = { input_tokens: 3, output_tokens: 2, cache_read_tokens: 0 };
function step(iteration: number, calls: ToolCallRef[] = []): NewSessionEvent[] {
  const content = [{ type: 'text', text: 'hi' }, ...calls.map((c) => ({ type: 'tool_call', ...c }))];
  return [
    turnEvents.reasonStarted('r', turn, iteration),
    turnEvents.outputStarted('o', turn, 'llmsim', iteration),
    turnEvents.outputCompleted('c', turn, { message: { id: 'm', role: 'agent', content, created_at: '' }, model, usage }),
    turnEvents.llmGeneration('g', turn, { iteration, model, usage, stop_reason: calls.length ? 'tool_use' : 'end_turn', duration_ms: 1 }),
    turnEvents.reasonCompleted('rc', turn, iteration, 'end_turn', calls.length),
  ];
}
const call = (id: string, name = 'get_current_time'): ToolCallRef => ({ id, name, arguments: {} });
const ok = (c: ToolCallRef) => turnEvents.toolSucceeded('tc', turn, 'x', { call: c, display_name: c.name, result: [], duration_ms: 1 });
const begun = (c: ToolCallRef) => turnEvents.toolStarted('ts', turn, `exec-${c.id}`, c, c.name);

function eventTypes(d: TurnDecision): string[] {
  assert.ok(d.type === 'emit' || d.type === 'idle', `expected events, got ${d.type}`);
  return d.events.map((e) => e.type);
}

describe('turn decider', () => {
  it('a fresh turn starts with reason step 1', () => {
    assert.deepEqual(given(started), { type: 'reason', iteration: 1, resumed: false });
  });

  it('a step without stored output is redone (redelivery mid-stream), without a second reason.started', () => {
    const partial = step(1).slice(0, 2);
    assert.deepEqual(given([...started, ...partial]), { type: 'reason', iteration: 1, resumed: true });
  });

  it('no tool calls: turn.completed with iterations, duration from turn.started and the turn usage', () => {
    const d = given([...started, ...step(1)]);
    assert.deepEqual(eventTypes(d), ['turn.completed']);
    const data = (d as { events: NewSessionEvent[] }).events[0]!.data!;
    assert.deepEqual(data, { turn_id: turn.turn_id, iterations: 1, duration_ms: 10_000, usage });
  });

  it('after turn.completed: session.idled with the cumulative session usage', () => {
    const d = given([...started, ...step(1), turnEvents.turnCompleted('x', turn, { iterations: 1, duration_ms: 1, usage })], {
      sessionUsage: { input_tokens: 10, output_tokens: 5, cache_read_tokens: 1 },
    });
    assert.equal(d.type, 'idle');
    assert.deepEqual(eventTypes(d), ['session.idled']);
    assert.deepEqual((d as { events: NewSessionEvent[] }).events[0]!.data, {
      turn_id: turn.turn_id,
      iterations: 1,
      usage: { input_tokens: 10, output_tokens: 5, cache_read_tokens: 1 },
    });
  });

  it('after session.idled: done (a redelivered, finished turn is just acked)', () => {
    const events = [
      ...started,
      ...step(1),
      turnEvents.turnCompleted('x', turn, { iterations: 1, duration_ms: 1, usage }),
      turnEvents.sessionIdled('i', turn, { iterations: 1, usage }),
    ];
    assert.deepEqual(given(events), { type: 'done' });
  });

  it('tool calls: act.started first, then the server calls to run', () => {
    const calls = [call('a'), call('b')];
    assert.deepEqual(eventTypes(given([...started, ...step(1, calls)])), ['act.started']);
    const d = given([...started, ...step(1, calls), turnEvents.actStarted('as', turn, 1, calls)]);
    assert.deepEqual(d, { type: 'act', iteration: 1, calls });
  });

  it('completed tools are not run again; only the rest are', () => {
    const calls = [call('a'), call('b')];
    const d = given([...started, ...step(1, calls), turnEvents.actStarted('as', turn, 1, calls), begun(calls[0]!), ok(calls[0]!)]);
    assert.deepEqual(d, { type: 'act', iteration: 1, calls: [calls[1]] });
  });

  it('a tool started but never completed (its worker died) gets an "interrupted" error, keeping its exec id', () => {
    const calls = [call('a'), call('b')];
    const d = given([
      ...started,
      ...step(1, calls),
      turnEvents.actStarted('as', turn, 1, calls),
      begun(calls[0]!),
      begun(calls[1]!),
      ok(calls[1]!),
    ]);
    assert.deepEqual(eventTypes(d), ['tool.completed']);
    const e = (d as { events: NewSessionEvent[] }).events[0]!;
    assert.equal(dataOf(e)['tool_call_id'], 'a');
    assert.equal(dataOf(e)['success'], false);
    assert.equal(dataOf(e)['status'], 'error');
    assert.match(String(dataOf(e)['error']), /interrupted/);
    assert.equal(e.context!.exec_id, 'exec-a');
  });

  it('all tools done: act.completed with counts, then the next reason step', () => {
    const calls = [call('a'), call('b')];
    const failed = turnEvents.toolFailed('f', turn, 'x', { call: calls[1]!, display_name: 'x', error: 'no' });
    const base = [...started, ...step(1, calls), turnEvents.actStarted('as', turn, 1, calls), ok(calls[0]!), failed];
    const d = given(base);
    assert.deepEqual(eventTypes(d), ['act.completed']);
    assert.deepEqual((d as { events: NewSessionEvent[] }).events[0]!.data, {
      turn_id: turn.turn_id,
      iteration: 1,
      succeeded: 1,
      failed: 1,
    });
    assert.deepEqual(given([...base, turnEvents.actCompleted('ac', turn, 1, 1, 1)]), { type: 'reason', iteration: 2, resumed: false });
  });

  it('max_iterations: after the last allowed step acted, turn.failed with error_code max_iterations', () => {
    const c = call('a');
    const events = [
      ...started,
      ...step(1, [c]),
      turnEvents.actStarted('as', turn, 1, [c]),
      ok(c),
      turnEvents.actCompleted('ac', turn, 1, 1, 0),
    ];
    const d = given(events, { maxIterations: 1 });
    assert.deepEqual(eventTypes(d), ['turn.failed']);
    assert.equal(dataOf((d as { events: NewSessionEvent[] }).events[0])['error_code'], 'max_iterations');
    assert.equal(dataOf((d as { events: NewSessionEvent[] }).events[0])['iterations'], 1);
  });

  it('turn.failed (llm_error) → session.idled', () => {
    const d = given([
      ...started,
      turnEvents.reasonStarted('r', turn, 1),
      turnEvents.turnFailed('f', turn, { error: 'x', error_code: 'llm_error', iterations: 1 }),
    ]);
    assert.deepEqual(eventTypes(d), ['session.idled']);
  });

  it('client tools: tool.call_requested for client calls, server calls still run, then wait for the client', () => {
    const calls = [call('srv'), call('cli', 'ask_user')];
    const clientToolNames = new Set(['ask_user']);
    const acting = [...started, ...step(1, calls), turnEvents.actStarted('as', turn, 1, calls)];
    const d1 = given(acting, { clientToolNames });
    assert.deepEqual(eventTypes(d1), ['tool.call_requested']);
    assert.deepEqual((d1 as { events: NewSessionEvent[] }).events[0]!.data, { tool_calls: [calls[1]] });
    const requested = [...acting, turnEvents.toolCallRequested('q', turn, [calls[1]!])];
    assert.deepEqual(given(requested, { clientToolNames }), { type: 'act', iteration: 1, calls: [calls[0]] });
    assert.deepEqual(given([...requested, begun(calls[0]!), ok(calls[0]!)], { clientToolNames }), {
      type: 'wait_for_client',
      pending: ['cli'],
    });
    const answered = [...requested, begun(calls[0]!), ok(calls[0]!), ok(calls[1]!)];
    assert.deepEqual(eventTypes(given(answered, { clientToolNames })), ['act.completed']);
  });

  it('cancel while waiting for the claim: the cancellation message, then session.idled', () => {
    const d = given([...started, turnEvents.turnCancelled('c', turn, ZERO_USAGE)]);
    assert.deepEqual(eventTypes(d), ['output.message.completed']);
    const e = (d as { events: NewSessionEvent[] }).events[0]!;
    assert.deepEqual((dataOf(e)['message'] as { content: unknown }).content, [{ type: 'text', text: 'Work was cancelled by user.' }]);
    assert.equal(e.metadata!['cancellation'], true);
    const closed = [...started, turnEvents.turnCancelled('c', turn, ZERO_USAGE), e];
    assert.deepEqual(eventTypes(given(closed)), ['session.idled']);
  });

  it('cancel while tools run: every open call gets a cancelled result and act.completed before the message', () => {
    const calls = [call('a'), call('b'), call('c')];
    const events = [
      ...started,
      ...step(1, calls),
      turnEvents.actStarted('as', turn, 1, calls),
      begun(calls[0]!),
      ok(calls[0]!),
      begun(calls[1]!),
      turnEvents.turnCancelled('x', turn, ZERO_USAGE),
    ];
    const d = given(events);
    assert.deepEqual(eventTypes(d), ['tool.completed', 'tool.completed', 'act.completed', 'output.message.completed']);
    const [b, c] = (d as { events: NewSessionEvent[] }).events;
    assert.equal(dataOf(b)['tool_call_id'], 'b');
    assert.equal(b!.context!.exec_id, 'exec-b');
    assert.equal(dataOf(c)['tool_call_id'], 'c');
    assert.equal(dataOf(b)['success'], false);
  });

  it('cancel after turn.completed but before session.idled still closes with the cancellation message', () => {
    const events = [
      ...started,
      ...step(1),
      turnEvents.turnCompleted('x', turn, { iterations: 1, duration_ms: 1, usage }),
      turnEvents.turnCancelled('c', turn, ZERO_USAGE),
    ];
    assert.deepEqual(eventTypes(given(events)), ['output.message.completed']);
  });

  it('events of other turns are ignored', () => {
    const other = { turn_id: 'other', input_message_id: 'x' };
    assert.deepEqual(
      given([
        ...started,
        turnEvents.turnCancelled('c', other, ZERO_USAGE),
        turnEvents.turnFailed('f', other, { error: 'x', error_code: 'llm_error', iterations: 0 }),
      ]),
      {
        type: 'reason',
        iteration: 1,
        resumed: false,
      },
    );
  });

  describe('a step whose closing append was stored only in part (issue 13 item 6)', () => {
    const generation = { stop_reason: 'tool_use', duration_ms: 420, usage: { input_tokens: 7, output_tokens: 5, cache_read_tokens: 3 } };
    const calls = [call('c1')];
    const message = { id: 'm', role: 'agent' as const, content: [{ type: 'tool_call', ...calls[0]! }], created_at: '' };
    const opened = [turnEvents.reasonStarted('r', turn, 1), turnEvents.outputStarted('o', turn, 'llmsim', 1)];
    const completed = turnEvents.outputCompleted('c', turn, { message, model, usage: generation.usage, generation });

    it('only output.message.completed stored: llm.generation and reason.completed from its record, before anything else', () => {
      const d = given([...started, ...opened, completed]);
      assert.deepEqual(eventTypes(d), ['llm.generation', 'reason.completed']);
      const [gen, done] = (d as { events: NewSessionEvent[] }).events;
      assert.deepEqual(gen!.data, {
        turn_id: turn.turn_id,
        iteration: 1,
        ...model,
        stop_reason: 'tool_use',
        duration_ms: 420,
        usage: generation.usage,
      });
      assert.deepEqual(done!.data, { turn_id: turn.turn_id, iteration: 1, stop_reason: 'tool_use', tool_calls: 1 });
    });

    it('llm.generation stored too: only reason.completed, so usage is counted once', () => {
      const gen = turnEvents.llmGeneration('g', turn, { iteration: 1, model, ...generation });
      assert.deepEqual(eventTypes(given([...started, ...opened, completed, gen])), ['reason.completed']);
      const closed = [...started, ...opened, completed, gen, turnEvents.reasonCompleted('rc', turn, 1, 'tool_use', 1)];
      assert.deepEqual(eventTypes(given(closed)), ['act.started'], 'a closed step goes on to act');
    });

    it('the repaired step counts once in turn.completed', () => {
      const answer = turnEvents.outputCompleted('c2', turn, {
        message: { id: 'm2', role: 'agent', content: [{ type: 'text', text: 'done' }], created_at: '' },
        model,
        usage,
        generation: { stop_reason: 'end_turn', duration_ms: 1, usage },
      });
      const d = given([...started, ...step(1), turnEvents.reasonStarted('r2', turn, 2), answer]);
      const repair = (d as { events: NewSessionEvent[] }).events;
      assert.deepEqual(
        repair.map((e) => e.type),
        ['llm.generation', 'reason.completed'],
      );
      const after = given([...started, ...step(1), turnEvents.reasonStarted('r2', turn, 2), answer, ...repair]);
      assert.deepEqual(eventTypes(after), ['turn.completed']);
      const total = dataOf((after as { events: NewSessionEvent[] }).events[0])['usage'];
      assert.deepEqual(total, { input_tokens: 6, output_tokens: 4, cache_read_tokens: 0 });
    });

    it('a pending cancel waits until the step is closed', () => {
      const d = given([...started, ...opened, completed, turnEvents.turnCancelled('x', turn, ZERO_USAGE)]);
      assert.deepEqual(eventTypes(d), ['llm.generation', 'reason.completed']);
    });

    it('a message written without the record (an older version): what the message shows', () => {
      const bare = turnEvents.outputCompleted('c', turn, { message, model, usage: generation.usage });
      const d = given([...started, ...opened, bare]);
      const [gen, done] = (d as { events: NewSessionEvent[] }).events;
      assert.deepEqual(dataOf(gen)['usage'], { input_tokens: 7, output_tokens: 5, cache_read_tokens: 0 });
      assert.equal(dataOf(gen)['stop_reason'], 'tool_use');
      assert.equal(dataOf(done)['tool_calls'], 1);
    });

    it('a cancellation message is not a step: nothing to close', () => {
      const cancelled = turnEvents.outputCompleted('cc', turn, { message, model, usage: ZERO_USAGE, cancellation: true });
      const d = given([...started, turnEvents.turnCancelled('x', turn, ZERO_USAGE), cancelled]);
      assert.deepEqual(eventTypes(d), ['session.idled']);
    });
  });

  it('controls come from the turn input message', () => {
    const input = turnEvents.inputMessage(
      'in',
      { id: turn.input_message_id, role: 'user', content: [], created_at: '', controls: { max_tokens: 5 } },
      turn,
    );
    let n = 0;
    const stored = [input].map((e) => ({ ...e, id: e.id!, ts: '', session_id: 's', sequence: ++n, context: e.context!, data: e.data! }));
    assert.deepEqual(foldTurn(turn, stored).controls, { max_tokens: 5 });
  });
});

describe('turn decider: a compaction on demand (decision 0103)', () => {
  const compactionStarted = [turnEvents.turnStarted('t', turn, undefined, 'compaction'), turnEvents.sessionActivated('a', turn)];
  const compacted = turnEvents.sessionCompacted('sc', turn, {
    summary: 's',
    up_to_event_id: 'm1',
    tokens_before: 100,
    tokens_after: 10,
    reason: 'manual',
    ...model,
    usage,
  });

  it('compacts instead of reasoning; once session.compacted is stored the turn completes with its usage, then idles', () => {
    assert.deepEqual(given(compactionStarted), { type: 'compact' });
    const done = given([...compactionStarted, compacted]);
    assert.ok(done.type === 'emit');
    assert.deepEqual(eventTypes(done), ['turn.completed']);
    assert.deepEqual(dataOf(done.events[0])['usage'], usage, 'the summary call is the turn’s usage');
    const completed = turnEvents.turnCompleted('tc', turn, { iterations: 0, duration_ms: 1, usage });
    assert.deepEqual(eventTypes(given([...compactionStarted, compacted, completed])), ['session.idled']);
  });

  it('a cancelled compaction closes by the cancel flow and never compacts', () => {
    const cancelled = turnEvents.turnCancelled('x', turn, ZERO_USAGE);
    assert.deepEqual(eventTypes(given([...compactionStarted, cancelled])), ['output.message.completed']);
  });

  it('nothing to compact (turn.failed) idles', () => {
    const failed = turnEvents.turnFailed('f', turn, { error: 'Nothing to compact', error_code: 'nothing_to_compact', iterations: 0 });
    assert.deepEqual(eventTypes(given([...compactionStarted, failed])), ['session.idled']);
  });
});
