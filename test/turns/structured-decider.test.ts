import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { NewSessionEvent, SessionEvent } from '../../schemas/events.js';
import { decideTurnStep, type TurnDecision } from '../../src/turns/turn-decider.js';
import { turnEvents, ZERO_USAGE, type StructuredReply, type TurnRef } from '../../src/turns/turn-events.js';
import { foldTurn } from '../../src/turns/turn-state.js';
import { dataOf } from '../helpers/raw-log.js';

/** Issue 26 item 4, the pure core: after a final reply that missed the response format, one repair step, then turn.failed. */
const turn: TurnRef = { turn_id: '01900000-0000-7000-8000-00000000aaaa', input_message_id: '01900000-0000-7000-8000-00000000bbbb' };
const model = { model: 'llmsim', model_id: 'llmsim', provider_id: 'llmsim' };
const usage = { input_tokens: 3, output_tokens: 2, cache_read_tokens: 0 };

function step(iteration: number, structured: StructuredReply): NewSessionEvent[] {
  const message = { id: 'm', role: 'agent' as const, content: [{ type: 'text', text: '{}' }], created_at: '' };
  return [
    turnEvents.reasonStarted('r', turn, iteration),
    turnEvents.outputCompleted('c', turn, { message, model, usage, structured }),
    turnEvents.llmGeneration('g', turn, { iteration, model, usage, stop_reason: 'end_turn', duration_ms: 1 }),
    turnEvents.reasonCompleted('rc', turn, iteration, 'end_turn', 0),
  ];
}

function given(events: NewSessionEvent[], maxIterations = 100): TurnDecision {
  let n = 0;
  const stored: SessionEvent[] = [turnEvents.turnStarted('t', turn), ...events].map((e) => ({
    ...e,
    id: e.id ?? `e${++n}`,
    ts: '2026-01-01T00:00:00.000Z',
    session_id: 's',
    sequence: ++n,
    context: e.context ?? {},
  }));
  let id = 0;
  return decideTurnStep(foldTurn(turn, stored), {
    maxIterations,
    clientToolNames: new Set(),
    sessionUsage: ZERO_USAGE,
    model: null,
    now: new Date(),
    newId: () => `id${++id}`,
  });
}

const failedCode = (d: TurnDecision) =>
  d.type === 'emit'
    ? d.events.map((e) => `${e.type}:${String((e.data as Record<string, unknown> | undefined)?.['error_code'] ?? '')}`)
    : d.type;

describe('turn decider: structured replies', () => {
  it('a valid reply completes the turn', () => {
    assert.deepEqual(failedCode(given(step(1, { parsed: {} }))), ['turn.completed:']);
  });
  it('the first invalid reply gets one repair step', () => {
    assert.deepEqual(given(step(1, { errors: ['/ must be object'] })), { type: 'reason', iteration: 2, resumed: false });
  });
  it('invalid after the repair: turn.failed invalid_structured_output', () => {
    const d = given([...step(1, { errors: ['a'] }), ...step(2, { errors: ['/x must be string'] })]);
    assert.deepEqual(failedCode(d), ['turn.failed:invalid_structured_output']);
    assert.match(String(dataOf((d as { events: NewSessionEvent[] }).events[0])['error']), /\/x must be string/);
  });
  it('no repair past max_iterations', () => {
    assert.deepEqual(failedCode(given(step(1, { errors: ['a'] }), 1)), ['turn.failed:invalid_structured_output']);
  });
});
