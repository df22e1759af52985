/**
 * The pure core of a turn (style rule 21): `decideTurnStep` says what happens next, from the
 * state `evolveTurn` folded (turn-state.ts). No I/O, no clock, no random ids:
 * time and an id supplier come in as arguments, so a redelivered turn that folds the same log
 * makes the same decision (durable steps, rule 22).
 */
import type { NewSessionEvent as NewEvent } from '../../schemas/events.js';
import {
  CLIENT_TOOL_SOURCE,
  CANCELLED_OUTPUT_TEXT,
  CANCELLED_TOOL_ERROR,
  INTERRUPTED_TOOL_ERROR,
  textPart,
  turnEvents,
  type ModelRef,
  type ToolCallRef,
  type ToolSource,
  type Usage,
} from './turn-events.js';
import { stepClosingEvents } from './turn-event-groups.js';
import { approvalEvents, mayRun, type ApprovalPolicyOf } from './approval-step.js';
import { invalidReplyOutcome } from './structured-output.js';
import type { TurnState } from './turn-state.js';

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
  /** Client tool results or approval decisions are outstanding: mark the session waiting and ack. */
  | { type: 'wait_for_client'; pending: string[] }
  /** A compaction on demand: summarise the history (`session.compacted`, or `turn.failed` when there is nothing to), then decide again. */
  | { type: 'compact' };

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
  /** The tool approval policy of a server tool (decision 0101); absent: every call may run. */
  approvalOf?: ApprovalPolicyOf;
  /** The session's creator, named in `tool.approval_requested` as one who may decide. */
  sessionOwner?: string;
}

const ALLOW_ALL: ApprovalPolicyOf = () => 'always_allow';
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
  if (s.compaction) {
    if (!s.compacted) return { type: 'compact' };
    const completed = { iterations: 0, duration_ms: durationMs(s, input.now), usage: s.usage };
    return { type: 'emit', events: [turnEvents.turnCompleted(id(), turn, completed)] };
  }
  const step = s.steps.at(-1);
  if (!step) return { type: 'reason', iteration: 1, resumed: false };
  if (!step.llmDone) return { type: 'reason', iteration: step.iteration, resumed: true };
  if (step.toolCalls.length === 0) {
    const invalid = invalidReplyOutcome(s, input.maxIterations);
    if (invalid?.kind === 'repair') return { type: 'reason', iteration: step.iteration + 1, resumed: false };
    if (invalid) {
      const failed = { error: invalid.error, error_code: 'invalid_structured_output' as const, iterations };
      return { type: 'emit', events: [turnEvents.turnFailed(id(), turn, failed)] };
    }
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
  const serverCalls = step.toolCalls.filter((c) => open(c) && !isClient(c) && !step.requested.has(c.id));
  const policyOf = input.approvalOf ?? ALLOW_ALL;
  const approvals = approvalEvents({ turn, step, serverCalls, policyOf, sessionOwner: input.sessionOwner ?? '', sourceOf, newId: id });
  if (approvals.length) return { type: 'emit', events: approvals };
  const toRun = serverCalls.filter((c) => mayRun(step, c));
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

/** The tool's source for its event tags; client tools are known by name even without `toolSource`. */
function toolSourceOf(input: DecideInput): (name: string) => ToolSource {
  return (name) => input.toolSource?.(name) ?? (input.clientToolNames.has(name) ? CLIENT_TOOL_SOURCE : null);
}

/** Spec 3.2 step 4, keeping the transcript consistent: every open tool call gets a result first. */
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
