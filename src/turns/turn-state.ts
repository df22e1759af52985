/**
 * A turn's state, folded from the session's events (`evolveTurn`): its steps, their tool calls
 * and results, its outcome. Pure, so a redelivered turn that folds the same log holds the same state.
 */
import type { SessionEvent } from '../../schemas/events.js';
import {
  addUsage,
  ZERO_USAGE,
  type GenerationFacts,
  type ModelRef,
  type StoredMessage,
  type ToolCallRef,
  type TurnRef,
  type Usage,
} from './turn-events.js';

/** One reason step (LLM call) and its act phase. */
export interface StepState {
  iteration: number;
  /** `output.message.completed` is stored: the LLM call's result is durable. */
  llmDone: boolean;
  /**
   * What that message's closing events report (from its metadata), and whether they are
   * stored: the append that carried all three may have stored only a prefix.
   */
  generation: GenerationFacts | null;
  model: ModelRef | null;
  generationLogged: boolean;
  reasonCompleted: boolean;
  toolCalls: readonly ToolCallRef[];
  actStarted: boolean;
  actCompleted: boolean;
  /** Tool call id → exec id, for every `tool.started`. */
  started: ReadonlyMap<string, string>;
  /** Tool call id → success, for every `tool.completed`. */
  completed: ReadonlyMap<string, boolean>;
  /** Client tool calls announced with `tool.call_requested`. */
  requested: ReadonlySet<string>;
  /** Server tool calls announced with `tool.approval_requested` (they wait for a person). */
  approvalRequested: ReadonlySet<string>;
  /** Tool call id → the person's decision (`tool.approval_decided`); the first one counts. */
  approvals: ReadonlyMap<string, ApprovalDecision>;
  /** Why the step's reply did not match the turn's response format (null: it did, or none was asked for). */
  structuredErrors: readonly string[] | null;
}

export interface ApprovalDecision {
  approved: boolean;
  reason?: string;
}

export interface TurnState {
  turn: TurnRef;
  /** `ts` of `turn.started`, the origin of `duration_ms`. */
  startedAt: string | null;
  hasTurnStarted: boolean;
  /** This turn's `session.activated` is stored (the last event of its preamble). */
  activated: boolean;
  /** The input message's `controls` (max_tokens, temperature, model_id, reasoning_effort). */
  controls: Readonly<Record<string, unknown>>;
  steps: readonly StepState[];
  /** This turn's usage (sum of its `llm.generation` events and of its sub-agents' turns, from `tool.completed`). */
  usage: Usage;
  /** The model of the latest generation, for the metadata of a cancellation message. */
  model: ModelRef | null;
  outcome: 'completed' | 'failed' | null;
  cancelled: boolean;
  /** A compaction on demand (`turn.started` kind `compaction`): it summarises instead of reasoning. */
  compaction: boolean;
  /** This turn stored a `session.compacted`. */
  compacted: boolean;
  /** The cancellation's `output.message.completed` is stored. */
  cancelClosed: boolean;
  idled: boolean;
}

export function initialTurnState(turn: TurnRef): TurnState {
  return {
    turn,
    startedAt: null,
    hasTurnStarted: false,
    activated: false,
    controls: {},
    steps: [],
    usage: ZERO_USAGE,
    model: null,
    outcome: null,
    cancelled: false,
    compaction: false,
    compacted: false,
    cancelClosed: false,
    idled: false,
  };
}

function newStep(iteration: number): StepState {
  return {
    iteration,
    llmDone: false,
    generation: null,
    model: null,
    generationLogged: false,
    reasonCompleted: false,
    toolCalls: [],
    actStarted: false,
    actCompleted: false,
    started: new Map(),
    completed: new Map(),
    requested: new Set(),
    approvalRequested: new Set(),
    approvals: new Map(),
    structuredErrors: null,
  };
}

/** Replaces the last step (creating step 1 if a stray event arrives first). */
function withLastStep(s: TurnState, change: (step: StepState) => StepState): TurnState {
  const last = s.steps.at(-1) ?? newStep(1);
  const steps = s.steps.length ? s.steps.slice(0, -1) : [];
  return { ...s, steps: [...steps, change(last)] };
}

/** The step a tool event belongs to: the latest one that knows the call (else the last). */
function withStepOf(s: TurnState, callId: string, change: (step: StepState) => StepState): TurnState {
  let index = s.steps.length - 1;
  for (let i = s.steps.length - 1; i >= 0; i--) {
    if (s.steps[i]!.toolCalls.some((c) => c.id === callId)) {
      index = i;
      break;
    }
  }
  if (index < 0) return s;
  const steps = s.steps.slice();
  steps[index] = change(steps[index]!);
  return { ...s, steps };
}

function toolCallsOf(message: StoredMessage): ToolCallRef[] {
  return message.content.flatMap((part) => {
    if (part.type !== 'tool_call') return [];
    return [{ id: String(part['id']), name: String(part['name']), arguments: (part['arguments'] ?? {}) as Record<string, unknown> }];
  });
}

/** Folds one event into the turn's state; events of other turns leave it unchanged. */
export function evolveTurn(s: TurnState, e: SessionEvent): TurnState {
  if (e.context?.turn_id !== s.turn.turn_id) return s;
  switch (e.type) {
    case 'turn.started':
      return { ...s, hasTurnStarted: true, startedAt: s.startedAt ?? e.ts, compaction: s.compaction || e.data.kind === 'compaction' };
    case 'session.compacted':
      // The summary call is this turn's usage too (it is the session's: transcript.ts).
      return { ...s, compacted: true, usage: addUsage(s.usage, e.data.usage) };
    case 'reason.started':
      return { ...s, steps: [...s.steps, newStep(e.data.iteration ?? s.steps.length + 1)] };
    case 'output.message.completed': {
      if (e.metadata?.['cancellation']) return { ...s, cancelClosed: true };
      const calls = toolCallsOf(e.data.message);
      const shown = e.data.usage;
      const generation = generationOf(e.metadata?.['generation']) ?? {
        // An event of an older version has no record of the call: what the message shows.
        stop_reason: calls.length ? 'tool_use' : 'end_turn',
        duration_ms: 0,
        usage: { input_tokens: shown.input_tokens, output_tokens: shown.output_tokens, cache_read_tokens: 0 },
      };
      const { model, model_id, provider_id } = e.data.metadata;
      const ref = { model, model_id: model_id ?? null, provider_id: provider_id ?? null };
      const structuredErrors = e.data.structured_output_errors ?? null;
      return withLastStep(s, (step) => ({ ...step, llmDone: true, toolCalls: calls, generation, model: ref, structuredErrors }));
    }
    case 'llm.generation': {
      const { model, model_id, provider_id, usage } = e.data;
      const logged = withLastStep(s, (step) => ({ ...step, generationLogged: true }));
      return { ...logged, usage: addUsage(s.usage, usage), model: { model, model_id: model_id ?? null, provider_id: provider_id ?? null } };
    }
    case 'reason.completed':
      return withLastStep(s, (step) => ({ ...step, reasonCompleted: true }));
    case 'act.started':
      return withLastStep(s, (step) => ({ ...step, actStarted: true }));
    case 'act.completed':
      return withLastStep(s, (step) => ({ ...step, actCompleted: true }));
    case 'tool.started': {
      const call = e.data.tool_call;
      return withStepOf(s, call.id, (step) => ({ ...step, started: new Map(step.started).set(call.id, e.context.exec_id ?? '') }));
    }
    case 'tool.completed': {
      const { tool_call_id: id, success } = e.data;
      const done = withStepOf(s, id, (step) => ({ ...step, completed: new Map(step.completed).set(id, success) }));
      // A sub-agent's child turn counts in this turn's usage.
      return e.data.usage ? { ...done, usage: addUsage(done.usage, e.data.usage) } : done;
    }
    case 'tool.call_requested': {
      const calls = e.data.tool_calls;
      if (!calls.length) return s;
      return withStepOf(s, calls[0]!.id, (step) => ({ ...step, requested: new Set([...step.requested, ...calls.map((c) => c.id)]) }));
    }
    case 'tool.approval_requested': {
      const calls = e.data.tool_calls;
      if (!calls.length) return s;
      const ids = calls.map((c) => c.id);
      return withStepOf(s, ids[0]!, (step) => ({ ...step, approvalRequested: new Set([...step.approvalRequested, ...ids]) }));
    }
    case 'tool.approval_decided': {
      const { tool_call_id: id, approved, reason } = e.data;
      return withStepOf(s, id, (step) => {
        if (step.approvals.has(id)) return step;
        const decision: ApprovalDecision = reason === undefined ? { approved } : { approved, reason };
        return { ...step, approvals: new Map(step.approvals).set(id, decision) };
      });
    }
    case 'turn.completed':
      return { ...s, outcome: 'completed' };
    case 'turn.failed':
      return { ...s, outcome: 'failed' };
    case 'turn.cancelled':
      return { ...s, cancelled: true };
    case 'session.idled':
      return { ...s, idled: true };
    case 'input.message': {
      const { message } = e.data;
      if (message.id !== s.turn.input_message_id) return s;
      return { ...s, controls: message.controls ?? {} };
    }
    case 'session.activated':
      return { ...s, activated: true };
    case 'subagent.started':
    case 'session.created':
    case 'session.started':
    case 'input.queued':
    case 'input.dequeued':
    case 'reason.thinking.started':
    case 'reason.thinking.delta':
    case 'reason.thinking.completed':
    case 'output.message.started':
    case 'output.message.delta':
      return s;
    default: {
      const unknown: never = e;
      void unknown;
      return s;
    }
  }
}

/**
 * What the last step still waits for from outside: client calls without a result and calls
 * waiting for an approval decision. The turn resumes when both are empty.
 */
export function outstandingOf(step: StepState | undefined): { results: string[]; approvals: string[] } {
  if (!step) return { results: [], approvals: [] };
  const open = (id: string) => !step.completed.has(id);
  return {
    results: [...step.requested].filter(open),
    approvals: [...step.approvalRequested].filter((id) => open(id) && !step.approvals.has(id)),
  };
}

export function foldTurn(turn: TurnRef, events: Iterable<SessionEvent>): TurnState {
  let s = initialTurnState(turn);
  for (const e of events) s = evolveTurn(s, e);
  return s;
}

/** The `generation` record of an `output.message.completed`'s metadata, when it has a valid one. */
function generationOf(value: unknown): GenerationFacts | null {
  if (!value || typeof value !== 'object') return null;
  const g = value as Record<string, unknown>;
  const u = g['usage'] as Record<string, unknown> | undefined;
  const count = (n: unknown) => (typeof n === 'number' && Number.isInteger(n) && n >= 0 ? n : null);
  const input = count(u?.['input_tokens']);
  const output = count(u?.['output_tokens']);
  if (typeof g['stop_reason'] !== 'string' || input === null || output === null) return null;
  return {
    stop_reason: g['stop_reason'],
    duration_ms: count(g['duration_ms']) ?? 0,
    usage: { input_tokens: input, output_tokens: output, cache_read_tokens: count(u?.['cache_read_tokens']) ?? 0 },
  };
}
