import { EVENT_TYPES, type EventType } from '../../schemas/event-types.js';

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
