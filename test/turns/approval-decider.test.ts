import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decideTurnStep, type DecideInput, type TurnDecision } from '../../src/turns/turn-decider.js';
import { foldTurn } from '../../src/turns/turn-state.js';
import { turnEvents, ZERO_USAGE, type ToolCallRef, type TurnRef } from '../../src/turns/turn-events.js';
import { compileApprovalPolicy } from '../../src/turns/tool-approval-policy.js';
import type { NewSessionEvent, SessionEvent } from '../../schemas/events.js';

/** The decider's approval step (decision 0101), given/when/then over folded events; pure, no services. */
const turn: TurnRef = { turn_id: '01900000-0000-7000-8000-00000000aaaa', input_message_id: '01900000-0000-7000-8000-00000000bbbb' };
const model = { model: 'llmsim', model_id: 'llmsim', provider_id: 'llmsim' };
const usage = { input_tokens: 1, output_tokens: 1, cache_read_tokens: 0 };
const call = (id: string, name: string): ToolCallRef => ({ id, name, arguments: { q: id } });
const a = call('a', 'github__create_issue');
const b = call('b', 'get_current_time');

function given(events: NewSessionEvent[], input: Partial<DecideInput> = {}): TurnDecision {
  let n = 0;
  const stored = events.map((e) => ({
    id: e.id ?? `e${++n}`,
    type: e.type,
    ts: '2026-01-01T00:00:00.000Z',
    session_id: 's',
    sequence: ++n,
    context: e.context ?? {},
    data: e.data ?? {},
  })) as SessionEvent[];
  let id = 0;
  return decideTurnStep(foldTurn(turn, stored), {
    maxIterations: 100,
    clientToolNames: new Set(),
    sessionUsage: ZERO_USAGE,
    model: null,
    now: new Date(),
    newId: () => `id${++id}`,
    sessionOwner: 'owner-1',
    approvalOf: compileApprovalPolicy([{ tool: 'github__*', policy: 'always_ask' }], [{ tool: '*', policy: 'deny' }]),
    ...input,
  });
}

function stepWith(calls: ToolCallRef[]): NewSessionEvent[] {
  const content = calls.map((c) => ({ type: 'tool_call', ...c }));
  return [
    turnEvents.turnStarted('t', turn),
    turnEvents.sessionActivated('sa', turn),
    turnEvents.reasonStarted('r', turn, 1),
    turnEvents.outputCompleted('c', turn, { message: { id: 'm', role: 'agent', content, created_at: '' }, model, usage }),
    turnEvents.llmGeneration('g', turn, { iteration: 1, model, usage, stop_reason: 'tool_use', duration_ms: 1 }),
    turnEvents.reasonCompleted('rc', turn, 1, 'tool_use', calls.length),
    turnEvents.actStarted('as', turn, 1, calls),
  ];
}
const asked = turnEvents.toolApprovalRequested('ar', turn, [a], 'owner-1');
const decided = (approved: boolean, reason?: string) =>
  turnEvents.toolApprovalDecided('ad', turn, { call: a, approved, ...(reason ? { reason } : {}), decided_by: 'u' });

describe('turn decider: tool approval', () => {
  it('the session rule (ask) wins over the agent rule (deny); the other call is refused; nothing runs yet', () => {
    const d = given(stepWith([a, b]));
    assert.equal(d.type, 'emit');
    if (d.type !== 'emit') return;
    assert.deepEqual(
      d.events.map((e) => e.type),
      ['tool.completed', 'tool.approval_requested'],
    );
    assert.equal((d.events[0]!.data as Record<string, unknown>)['tool_call_id'], 'b');
    assert.match(String((d.events[0]!.data as Record<string, unknown>)['error']), /denied by the tool approval policy/);
    assert.deepEqual(d.events[1]!.data, { tool_calls: [a], deciders: { session_owner: 'owner-1', org_role: 'admin' } });
  });

  it('asked and undecided: the turn waits; approved: the call runs; denied: its reason is the result', () => {
    const refusedB = turnEvents.toolFailed('fb', turn, 'x', { call: b, display_name: b.name, error: 'refused' });
    assert.deepEqual(given([...stepWith([a, b]), refusedB, asked]), { type: 'wait_for_client', pending: ['a'] });
    assert.deepEqual(given([...stepWith([a, b]), refusedB, asked, decided(true)]), { type: 'act', iteration: 1, calls: [a] });
    const d = given([...stepWith([a, b]), refusedB, asked, decided(false, 'not today')]);
    assert.ok(d.type === 'emit');
    assert.deepEqual(
      d.events.map((e) => [e.type, (e.data as Record<string, unknown>)['tool_call_id'], (e.data as Record<string, unknown>)['error']]),
      [['tool.completed', 'a', 'not today']],
    );
  });

  it('a pending call stays pending when the policy changes (the log decides), and the first decision counts', () => {
    const allowAll = compileApprovalPolicy([{ tool: '*', policy: 'always_allow' }], []);
    assert.deepEqual(given([...stepWith([a]), asked], { approvalOf: allowAll }), { type: 'wait_for_client', pending: ['a'] });
    assert.deepEqual(given([...stepWith([a]), asked, decided(true), decided(false)], { approvalOf: allowAll }), {
      type: 'act',
      iteration: 1,
      calls: [a],
    });
  });

  it('no rules: every call runs', () => {
    assert.deepEqual(given(stepWith([a, b]), { approvalOf: compileApprovalPolicy([], null) }), {
      type: 'act',
      iteration: 1,
      calls: [a, b],
    });
  });
});
