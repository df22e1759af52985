/**
 * The tool approval part of the pure decider (decision 0101): which open server tool calls of
 * the last step the policy refuses, which wait for a person, which a person denied, and which
 * may run. The policy is asked only about calls with no `tool.approval_requested` yet; once a
 * call waits, the log decides it (a policy edited meanwhile does not change a pending call).
 */
import type { NewSessionEvent as NewEvent } from '../../schemas/events.js';
import type { ToolApprovalPolicyValue } from '../../schemas/approvals.js';
import { DENIED_TOOL_ERROR, POLICY_DENIED_TOOL_ERROR, turnEvents, type ToolCallRef, type ToolSource, type TurnRef } from './turn-events.js';
import type { StepState } from './turn-state.js';

export type ApprovalPolicyOf = (toolName: string) => ToolApprovalPolicyValue;

export interface ApprovalStepInput {
  turn: TurnRef;
  step: StepState;
  /** The last step's open server tool calls that never started. */
  serverCalls: ToolCallRef[];
  policyOf: ApprovalPolicyOf;
  /** Named in the request as one who may decide (with the organisation's admins). */
  sessionOwner: string;
  sourceOf: (name: string) => ToolSource;
  newId: () => string;
}

/** Events to append before anything runs (refusals, approval requests, denials), else none. */
export function approvalEvents(p: ApprovalStepInput): NewEvent[] {
  const { step, turn, newId } = p;
  const unasked = p.serverCalls.filter((c) => !step.approvalRequested.has(c.id));
  const refused = unasked.filter((c) => p.policyOf(c.name) === 'deny');
  const toAsk = unasked.filter((c) => p.policyOf(c.name) === 'always_ask');
  const denied = p.serverCalls.filter((c) => step.approvals.get(c.id)?.approved === false);
  const failed = (c: ToolCallRef, error: string) =>
    turnEvents.toolFailed(newId(), turn, newId(), { call: c, display_name: c.name, error, source: p.sourceOf(c.name) });
  const events: NewEvent[] = [
    ...refused.map((c) => failed(c, POLICY_DENIED_TOOL_ERROR)),
    ...denied.map((c) => failed(c, step.approvals.get(c.id)?.reason || DENIED_TOOL_ERROR)),
  ];
  if (toAsk.length) events.push(turnEvents.toolApprovalRequested(newId(), turn, toAsk, p.sessionOwner, p.sourceOf));
  return events;
}

/** A server call may run: it needs no approval, or a person approved it. */
export function mayRun(step: StepState, call: ToolCallRef): boolean {
  return !step.approvalRequested.has(call.id) || step.approvals.get(call.id)?.approved === true;
}
