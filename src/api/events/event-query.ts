import type { SessionEvent } from '../../../schemas/events.js';
import type { ListEventsQueryInput } from '../../../schemas/sessions.js';
import { InvalidRequestError } from '../../errors.js';
import { eventFilter, passesFilter } from '../../events/index.js';

export const DEFAULT_LIST_LIMIT = 1000;
export const DEFAULT_AROUND_WINDOW = 50;

/**
 * What one call of the events listing reads: the sequences in (after, before), the events of
 * that range that pass `accepts`, at most `limit` of them. `fromEnd` takes the last ones of the
 * range instead of the first (backward pagination, newest first); `descending` answers them
 * newest first.
 */
export interface EventWindow {
  after: number;
  /** Exclusive upper bound on sequence; Infinity for none. */
  before: number;
  limit: number;
  fromEnd: boolean;
  descending: boolean;
  accepts: ((e: SessionEvent) => boolean) | null;
}

/** Where the listing starts, once the ids it names are known: the sequence of since_id or around. */
export interface ResolvedAnchors {
  sinceSequence: number;
  aroundSequence?: number;
}

/**
 * The listing's window from its query (pure). Ranges intersect: since_id and after_sequence
 * both bound from below, the stricter wins. `around` replaces them (the reference API refuses
 * the combination, so do we). Without before_sequence or order_desc a page is the first
 * `limit` events, as the spec's polling needs.
 */
export function eventWindow(query: ListEventsQueryInput, anchors: ResolvedAnchors): EventWindow {
  if (query.window !== undefined && query.around === undefined)
    throw new InvalidRequestError('Invalid request: query.window needs query.around');
  const limit = query.limit ?? DEFAULT_LIST_LIMIT;
  const descending = query.order_desc === true;
  const accepts = eventPredicate(query);
  if (anchors.aroundSequence !== undefined) {
    const window = query.window ?? DEFAULT_AROUND_WINDOW;
    return {
      after: Math.max(0, anchors.aroundSequence - window - 1),
      before: anchors.aroundSequence + window + 1,
      limit,
      fromEnd: descending,
      descending,
      accepts,
    };
  }
  const after = Math.max(anchors.sinceSequence, query.after_sequence ?? 0);
  const before = query.before_sequence ?? Infinity;
  return { after, before, limit, fromEnd: descending || query.before_sequence !== undefined, descending, accepts };
}

/** The around/cursor combinations the reference API refuses with 400. */
export function assertAroundAlone(query: ListEventsQueryInput): void {
  if (query.around === undefined) return;
  for (const k of ['since_id', 'after_sequence', 'before_sequence'] as const) {
    if (query[k] !== undefined) throw new InvalidRequestError(`Invalid request: query.around cannot be combined with query.${k}`);
  }
}

/** Every per-event condition of the query in one predicate; null when every event passes. */
export function eventPredicate(query: ListEventsQueryInput): ((e: SessionEvent) => boolean) | null {
  const filter = eventFilter(query);
  const checks: ((e: SessionEvent) => boolean)[] = [];
  if (filter) checks.push((e) => passesFilter(filter, e));
  for (const key of ['turn_id', 'exec_id', 'trace_id'] as const) {
    const want = query[key];
    if (want !== undefined) checks.push((e) => e.context[key] === want);
  }
  if (query.tool_name !== undefined) {
    const tag = `tool:${query.tool_name}`;
    checks.push((e) => e.tags?.includes(tag) === true);
  }
  const from = query.from_ts === undefined ? undefined : Date.parse(query.from_ts);
  const to = query.to_ts === undefined ? undefined : Date.parse(query.to_ts);
  if (from !== undefined && to !== undefined && from > to)
    throw new InvalidRequestError('Invalid request: query.from_ts is after query.to_ts');
  if (from !== undefined || to !== undefined) {
    const [lo, hi] = [from ?? -Infinity, to ?? Infinity];
    checks.push((e) => {
      const ts = Date.parse(e.ts);
      return ts >= lo && ts <= hi;
    });
  }
  if (query.q !== undefined) {
    const needle = query.q.toLowerCase();
    checks.push((e) => JSON.stringify(e.data).toLowerCase().includes(needle));
  }
  if (checks.length === 0) return null;
  if (checks.length === 1) return checks[0]!;
  return (e) => checks.every((c) => c(e));
}
