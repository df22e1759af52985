/**
 * Builders of the events of a turn's act steps and tool calls (spec 6.2), part of `turnEvents`
 * (turn-events.ts). Pure: ids and timestamps come in as arguments.
 */
import type { EventData, NewTypedEvent } from '../../schemas/events.js';
import {
  CLIENT_TOOL_SOURCE,
  type MessagePart,
  type NestedTurn,
  on,
  type ToolCallRef,
  type ToolSource,
  toolTags,
  type TurnRef,
} from './turn-terms.js';

function nestedOf(n: NestedTurn | undefined): NestedTurn {
  if (!n) return {};
  return { ...(n.child_session_id ? { child_session_id: n.child_session_id } : {}), ...(n.usage ? { usage: { ...n.usage } } : {}) };
}

/** Tags of an event about several calls: each call's tool and source. */
function callsTags(calls: readonly ToolCallRef[], sourceOf: (name: string) => ToolSource): string[] {
  return calls.flatMap((c) => toolTags(c.name, sourceOf(c.name)));
}

export const toolEvents = {
  actStarted(
    id: string,
    turn: TurnRef,
    iteration: number,
    calls: ToolCallRef[],
    sourceOf: (name: string) => ToolSource = () => null,
  ): NewTypedEvent<'act.started'> {
    return {
      id,
      type: 'act.started',
      ...on(turn, {}, callsTags(calls, sourceOf)),
      data: { turn_id: turn.turn_id, iteration, tool_calls: calls.map((c) => ({ id: c.id, name: c.name })) },
    };
  },
  actCompleted(id: string, turn: TurnRef, iteration: number, succeeded: number, failed: number): NewTypedEvent<'act.completed'> {
    return { id, type: 'act.completed', ...on(turn), data: { turn_id: turn.turn_id, iteration, succeeded, failed } };
  },
  toolStarted(
    id: string,
    turn: TurnRef,
    execId: string,
    call: ToolCallRef,
    displayName: string,
    source: ToolSource = null,
  ): NewTypedEvent<'tool.started'> {
    return {
      id,
      type: 'tool.started',
      ...on(turn, { exec_id: execId }, toolTags(call.name, source)),
      data: { tool_call: call, display_name: displayName },
    };
  },
  toolSucceeded(
    id: string,
    turn: TurnRef,
    execId: string,
    t: { call: ToolCallRef; display_name: string; result: MessagePart[]; duration_ms: number; source?: ToolSource; nested?: NestedTurn },
  ): NewTypedEvent<'tool.completed'> {
    return {
      id,
      type: 'tool.completed',
      ...on(turn, { exec_id: execId }, toolTags(t.call.name, t.source ?? null)),
      data: {
        tool_call_id: t.call.id,
        tool_name: t.call.name,
        display_name: t.display_name,
        success: true,
        status: 'success',
        result: t.result,
        duration_ms: t.duration_ms,
        ...nestedOf(t.nested),
      },
    };
  },
  toolFailed(
    id: string,
    turn: TurnRef,
    execId: string,
    t: {
      call: Pick<ToolCallRef, 'id' | 'name'>;
      display_name: string;
      error: string;
      duration_ms?: number;
      source?: ToolSource;
      nested?: NestedTurn;
    },
  ): NewTypedEvent<'tool.completed'> {
    const data: EventData<'tool.completed'> = {
      tool_call_id: t.call.id,
      tool_name: t.call.name,
      display_name: t.display_name,
      success: false,
      status: 'error',
      error: t.error,
      ...(t.duration_ms !== undefined ? { duration_ms: t.duration_ms } : {}),
      ...nestedOf(t.nested),
    };
    return { id, type: 'tool.completed', ...on(turn, { exec_id: execId }, toolTags(t.call.name, t.source ?? null)), data };
  },
  toolCallRequested(id: string, turn: TurnRef, calls: ToolCallRef[]): NewTypedEvent<'tool.call_requested'> {
    return {
      id,
      type: 'tool.call_requested',
      ...on(
        turn,
        {},
        calls.flatMap((c) => toolTags(c.name, CLIENT_TOOL_SOURCE)),
      ),
      data: { tool_calls: calls },
    };
  },
  subagentStarted(id: string, turn: TurnRef, execId: string, data: EventData<'subagent.started'>): NewTypedEvent<'subagent.started'> {
    return { id, type: 'subagent.started', ...on(turn, { exec_id: execId }), data };
  },
  /** Server tool calls that wait for a person's decision (decision 0101). */
  toolApprovalRequested(
    id: string,
    turn: TurnRef,
    calls: ToolCallRef[],
    sessionOwner: string,
    sourceOf: (name: string) => ToolSource = () => null,
  ): NewTypedEvent<'tool.approval_requested'> {
    return {
      id,
      type: 'tool.approval_requested',
      ...on(turn, {}, callsTags(calls, sourceOf)),
      data: { tool_calls: calls, deciders: { session_owner: sessionOwner, org_role: 'admin' } },
    };
  },
  /** A person approved or denied one waiting call (appended by the API, folded by the worker). */
  toolApprovalDecided(
    id: string,
    turn: TurnRef,
    d: { call: Pick<ToolCallRef, 'id' | 'name'>; approved: boolean; reason?: string; decided_by: string },
  ): NewTypedEvent<'tool.approval_decided'> {
    const data: EventData<'tool.approval_decided'> = {
      tool_call_id: d.call.id,
      tool_name: d.call.name,
      approved: d.approved,
      ...(d.reason !== undefined ? { reason: d.reason } : {}),
      decided_by: d.decided_by,
    };
    return { id, type: 'tool.approval_decided', ...on(turn, {}, toolTags(d.call.name, null)), data };
  },
};
