/**
 * The pure core of a turn (style rule 21): `evolveTurn` folds the session's events into the
 * state of one turn, `decideTurnStep` says what happens next. No I/O, no clock, no random ids:
 * time and an id supplier come in as arguments, so a redelivered turn that folds the same log
 * makes the same decision (durable steps, rule 22).
 */
import type { NewSessionEvent as NewEvent, SessionEvent } from '../../schemas/events.js';
import {
  addUsage,
  CLIENT_TOOL_SOURCE,
  CANCELLED_OUTPUT_TEXT,
  CANCELLED_TOOL_ERROR,
  INTERRUPTED_TOOL_ERROR,
  stepClosingEvents,
  textPart,
  turnEvents,
  ZERO_USAGE,
  type GenerationFacts,
  type ModelRef,
  type StoredMessage,
  type ToolCallRef,
  type ToolSource,
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
  /** This turn's usage (sum of its `llm.generation` events). */
  usage: Usage;
  /** The model of the latest generation, for the metadata of a cancellation message. */
  model: ModelRef | null;
  outcome: 'completed' | 'failed' | null;
  cancelled: boolean;
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
      return { ...s, hasTurnStarted: true, startedAt: s.startedAt ?? e.ts };
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
      return withLastStep(s, (step) => ({ ...step, llmDone: true, toolCalls: calls, generation, model: ref }));
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
      return withStepOf(s, id, (step) => ({ ...step, completed: new Map(step.completed).set(id, success) }));
    }
    case 'tool.call_requested': {
      const calls = e.data.tool_calls;
      if (!calls.length) return s;
      return withStepOf(s, calls[0]!.id, (step) => ({ ...step, requested: new Set([...step.requested, ...calls.map((c) => c.id)]) }));
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
    case 'session.created':
    case 'session.started':
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

export function foldTurn(turn: TurnRef, events: Iterable<SessionEvent>): TurnState {
  let s = initialTurnState(turn);
  for (const e of events) s = evolveTurn(s, e);
  return s;
}

/** What the shell does next. */
export type TurnDecision =
  /** Nothing left to do for this turn: ack the job. */
  | { type: 'done' }
  /** Append these events, then decide again. */
  | { type: 'emit'; events: NewEvent[] }
  /** Mark the session idle, append these events (`session.idled`), ack. */
  | { type: 'idle'; events: NewEvent[] }
  /** Run a reason step; `resumed` when its `reason.started` is stored already (a redelivery). */
  | { type: 'reason'; iteration: number; resumed: boolean }
  /** Run these server tool calls (at most 10 at a time), then decide again. */
  | { type: 'act'; iteration: number; calls: ToolCallRef[] }
  /** Client tool results are outstanding: mark the session waiting and ack. */
  | { type: 'wait_for_client'; pending: string[] };

export interface DecideInput {
  maxIterations: number;
  /** Names of the agent's client tools (spec 2.2): their calls go to the client. */
  clientToolNames: ReadonlySet<string>;
  /** A tool's capability id, `client` for a client tool, null when unknown (for event tags). */
  toolSource?: (name: string) => ToolSource;
  /** The session's cumulative usage including this turn (for `session.idled`). */
  sessionUsage: Usage;
  /** The model the turn runs on, when resolved (metadata of a cancellation message). */
  model: ModelRef | null;
  now: Date;
  newId: () => string;
}

const NO_MODEL: ModelRef = { model: '', model_id: null, provider_id: null };

/** Decides the turn's next step from its folded state. */
export function decideTurnStep(s: TurnState, input: DecideInput): TurnDecision {
  const { turn } = s;
  const id = input.newId;
  const sourceOf = toolSourceOf(input);
  const iterations = s.steps.length;
  if (s.idled) return { type: 'done' };
  const unclosed = s.outcome || s.cancelClosed ? [] : missingStepClosing(s, id);
  if (unclosed.length) return { type: 'emit', events: unclosed };
  if (s.cancelled && !s.cancelClosed) return { type: 'emit', events: closeCancellation(s, input) };
  if (s.outcome || s.cancelClosed) {
    return { type: 'idle', events: [turnEvents.sessionIdled(id(), turn, { iterations, usage: input.sessionUsage })] };
  }
  const step = s.steps.at(-1);
  if (!step) return { type: 'reason', iteration: 1, resumed: false };
  if (!step.llmDone) return { type: 'reason', iteration: step.iteration, resumed: true };
  if (step.toolCalls.length === 0) {
    return {
      type: 'emit',
      events: [turnEvents.turnCompleted(id(), turn, { iterations, duration_ms: durationMs(s, input.now), usage: s.usage })],
    };
  }
  const open = (c: ToolCallRef) => !step.completed.has(c.id);
  const interrupted = step.toolCalls.filter((c) => open(c) && step.started.has(c.id));
  if (interrupted.length) {
    return {
      type: 'emit',
      events: interrupted.map((c) =>
        turnEvents.toolFailed(id(), turn, step.started.get(c.id) || id(), {
          call: c,
          display_name: c.name,
          error: INTERRUPTED_TOOL_ERROR,
          source: sourceOf(c.name),
        }),
      ),
    };
  }
  if (!step.actStarted) return { type: 'emit', events: [turnEvents.actStarted(id(), turn, step.iteration, [...step.toolCalls], sourceOf)] };
  const isClient = (c: ToolCallRef) => input.clientToolNames.has(c.name);
  const unrequested = step.toolCalls.filter((c) => open(c) && isClient(c) && !step.requested.has(c.id));
  if (unrequested.length) return { type: 'emit', events: [turnEvents.toolCallRequested(id(), turn, unrequested)] };
  const toRun = step.toolCalls.filter((c) => open(c) && !isClient(c) && !step.requested.has(c.id));
  if (toRun.length) return { type: 'act', iteration: step.iteration, calls: toRun };
  const pending = step.toolCalls.filter(open).map((c) => c.id);
  if (pending.length) return { type: 'wait_for_client', pending };
  if (!step.actCompleted) {
    const failed = [...step.completed.values()].filter((ok) => !ok).length;
    return { type: 'emit', events: [turnEvents.actCompleted(id(), turn, step.iteration, step.completed.size - failed, failed)] };
  }
  if (iterations >= input.maxIterations) {
    const error = `Maximum iterations reached (${input.maxIterations})`;
    return { type: 'emit', events: [turnEvents.turnFailed(id(), turn, { error, error_code: 'max_iterations', iterations })] };
  }
  return { type: 'reason', iteration: step.iteration + 1, resumed: false };
}

/**
 * The last step's `llm.generation` and `reason.completed` when its `output.message.completed`
 * is stored without them: the three went out in one append, which NATS may store only in
 * part (a leader change mid-append). Written from the message's own record of the call, so
 * usage counts the step exactly once.
 */
function missingStepClosing(s: TurnState, id: () => string): NewEvent[] {
  const step = s.steps.at(-1);
  const generation = step?.generation;
  if (!step || !generation || (step.generationLogged && step.reasonCompleted)) return [];
  return stepClosingEvents(
    id,
    s.turn,
    { iteration: step.iteration, model: step.model ?? NO_MODEL, toolCalls: step.toolCalls.length, generation },
    { generation: !step.generationLogged, reasonCompleted: !step.reasonCompleted },
  );
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

/** Spec 3.2 step 4, keeping the transcript consistent: every open tool call gets a result first. */
/** The tool's source for its event tags; client tools are known by name even without `toolSource`. */
function toolSourceOf(input: DecideInput): (name: string) => ToolSource {
  return (name) => input.toolSource?.(name) ?? (input.clientToolNames.has(name) ? CLIENT_TOOL_SOURCE : null);
}

function closeCancellation(s: TurnState, input: DecideInput): NewEvent[] {
  const { turn } = s;
  const id = input.newId;
  const sourceOf = toolSourceOf(input);
  const events: NewEvent[] = [];
  const step = s.steps.at(-1);
  if (step?.llmDone) {
    for (const c of step.toolCalls) {
      if (step.completed.has(c.id)) continue;
      events.push(
        turnEvents.toolFailed(id(), turn, step.started.get(c.id) || id(), {
          call: c,
          display_name: c.name,
          error: CANCELLED_TOOL_ERROR,
          source: sourceOf(c.name),
        }),
      );
    }
    if (step.actStarted && !step.actCompleted) {
      const failed = step.toolCalls.length - [...step.completed.values()].filter(Boolean).length;
      events.push(turnEvents.actCompleted(id(), turn, step.iteration, step.toolCalls.length - failed, failed));
    }
  }
  const message = { id: id(), role: 'agent' as const, content: [textPart(CANCELLED_OUTPUT_TEXT)], created_at: input.now.toISOString() };
  events.push(
    turnEvents.outputCompleted(id(), turn, { message, model: s.model ?? input.model ?? NO_MODEL, usage: s.usage, cancellation: true }),
  );
  return events;
}

function durationMs(s: TurnState, now: Date): number {
  const start = s.startedAt ? Date.parse(s.startedAt) : now.getTime();
  return Math.max(0, now.getTime() - start);
}
