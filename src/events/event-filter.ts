import { InvalidRequestError } from '../errors.js';
import { eventTypeFilter } from './event-types.js';

/** Most tag values one filter may name (as for `types` / `exclude`, spec 6.1). */
export const MAX_FILTER_TAGS = 25;

/** What a client asked to receive: event types (null = all) and tags (null = any; else at least one of them). */
export interface EventFilter {
  types: ReadonlySet<string> | null;
  tags: ReadonlySet<string> | null;
}

export interface EventFilterInput {
  types?: readonly string[];
  exclude?: readonly string[];
  tags?: readonly string[];
}

/**
 * The filter of the events listing and SSE: `types` first (empty values and an empty list mean
 * all types), then `exclude`, then `tags` (an event passes with any of them; values may also be
 * comma-separated, `tags=a,b`). Null when everything passes.
 */
export function eventFilter({ types = [], exclude = [], tags = [] }: EventFilterInput): EventFilter | null {
  const typeSet = eventTypeFilter(types.filter(Boolean), exclude.filter(Boolean));
  const tagList = splitTags(tags);
  if (tagList.length > MAX_FILTER_TAGS)
    throw new InvalidRequestError(`Invalid request: query.tags must NOT have more than ${MAX_FILTER_TAGS} items`);
  if (!typeSet && !tagList.length) return null;
  return { types: typeSet, tags: tagList.length ? new Set(tagList) : null };
}

/** `['a,b', 'c']` → `['a', 'b', 'c']`, empty values dropped. */
export function splitTags(values: readonly string[]): string[] {
  return values
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter(Boolean);
}

/** Whether an event (or its SSE frame) passes the filter. */
export function passesFilter(filter: EventFilter | null, event: { type: string; tags?: readonly string[] }): boolean {
  if (!filter) return true;
  if (filter.types && !filter.types.has(event.type)) return false;
  return !filter.tags || (event.tags ?? []).some((t) => filter.tags!.has(t));
}
