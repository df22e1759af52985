/**
 * A log as any writer of any event sees it. The service's writers append only the catalogue's
 * events (the port's type says so); the plumbing tests of the listing, SSE and the bus store
 * events the catalogue would not take (no data, other data), as another version of the service
 * sharing the store could have, and check the readers serve them as they were stored.
 */
import type { EventLog, LoggedEvent } from '../../src/bus/index.js';

export function rawLog(log: EventLog<LoggedEvent>): EventLog<LoggedEvent> {
  return log;
}

/** An event's `data` as stored JSON, for tests that look at fields whatever the event's type. */
export function dataOf(e: { data?: unknown } | null | undefined): Record<string, unknown> {
  return (e?.data ?? {}) as Record<string, unknown>;
}
