/**
 * Every event type a session log may hold (spec 6.2, plus `tool.call_requested` for client tools
 * and `tool.approval_requested` / `tool.approval_decided` for tool approval, decision 0101).
 */
export const EVENT_TYPES = [
  'session.created',
  'session.started',
  'session.activated',
  'session.idled',
  'input.message',
  'input.queued',
  'input.dequeued',
  'turn.started',
  'turn.completed',
  'turn.failed',
  'turn.cancelled',
  'reason.started',
  'reason.completed',
  'reason.thinking.started',
  'reason.thinking.delta',
  'reason.thinking.completed',
  'output.message.started',
  'output.message.delta',
  'output.message.completed',
  'act.started',
  'act.completed',
  'tool.started',
  'tool.completed',
  'tool.call_requested',
  'subagent.started',
  'tool.approval_requested',
  'tool.approval_decided',
  'llm.generation',
  'session.compacted',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];
