import type { EventLog, SessionEvent } from '../../bus/ports.js';
import { InvalidRequestError } from '../../errors.js';
import { passesFilter, type EventFilter } from '../../events/event-filter.js';

const PAGE = 1000;

/** The sequence after which to resume: that of `sinceId` in the session, 400 when unknown. */
export async function resolveSince(events: EventLog, sessionId: string, sinceId: string | undefined): Promise<number> {
  if (!sinceId) return 0;
  const e = await events.findById(sessionId, sinceId.toLowerCase());
  if (!e) throw new InvalidRequestError('Invalid request: unknown since_id');
  return e.sequence;
}

/** Up to `limit` events after `afterSequence` that pass the filter, reading forward in pages. */
export async function readFiltered(events: EventLog, sessionId: string, afterSequence: number, filter: EventFilter | null, limit: number): Promise<SessionEvent[]> {
  const out: SessionEvent[] = [];
  let cursor = afterSequence;
  for (;;) {
    const page = await events.read(sessionId, { afterSequence: cursor, limit: filter ? PAGE : limit - out.length });
    for (const e of page) {
      if (passesFilter(filter, e)) out.push(e);
      if (out.length >= limit) return out;
    }
    if (page.length === 0 || (!filter && out.length >= limit)) return out;
    cursor = page.at(-1)!.sequence;
  }
}

/** Every event of a session, in order. */
export async function readAll(events: EventLog, sessionId: string): Promise<SessionEvent[]> {
  return readFiltered(events, sessionId, 0, null, Number.MAX_SAFE_INTEGER);
}
