/** Every event type a session log may hold (spec 6.2, plus `tool.call_requested` for client tools). */
export const EVENT_TYPES = [
  'session.created',
  'session.started',
  'session.activated',
  'session.idled',
  'input.message',
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
  'llm.generation',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

const KNOWN = new Set<string>(EVENT_TYPES);

export function isEventType(value: string): value is EventType {
  return KNOWN.has(value);
}

/**
 * The set of types a client receives: `types` first (empty = all), then `exclude` removes
 * from it (spec 6.1). Returns null when every type passes.
 */
export function eventTypeFilter(types: readonly string[], exclude: readonly string[]): Set<string> | null {
  if (!types.length && !exclude.length) return null;
  const allowed = new Set<string>(types.length ? types : EVENT_TYPES);
  for (const t of exclude) allowed.delete(t);
  return allowed;
}
