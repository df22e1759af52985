import type { EventLog, SessionEvent } from '../../bus/ports.js';
import { InvalidRequestError } from '../../errors.js';
import type { EventWindow } from './event-query.js';

const PAGE = 1000;

/** The sequence of the event `id` names (the `since_id` or `around` parameter `field`); 0 for none, 400 when unknown. */
export async function resolveEventSequence(
  events: EventLog,
  sessionId: string,
  id: string | undefined,
  field: 'since_id' | 'around',
): Promise<number> {
  if (!id) return 0;
  const e = await events.findById(sessionId, id.toLowerCase());
  if (!e) throw new InvalidRequestError(`Invalid request: unknown ${field}`);
  return e.sequence;
}

/**
 * The events of a window (src/api/events/event-query.ts), oldest first unless it is descending.
 * Sequences are contiguous per session (bus port), so the last events of a range are read as
 * forward pages ending at its top, walking down: no backward read is needed from either bus.
 */
export async function readWindow(events: EventLog, sessionId: string, w: EventWindow): Promise<SessionEvent[]> {
  const passes = w.accepts ?? (() => true);
  if (!w.fromEnd) {
    const out: SessionEvent[] = [];
    let cursor = w.after;
    for (;;) {
      const page = await events.read(sessionId, { afterSequence: cursor, limit: w.accepts ? PAGE : Math.min(PAGE, w.limit - out.length) });
      for (const e of page) {
        if (e.sequence >= w.before) return out;
        if (passes(e)) out.push(e);
        if (out.length >= w.limit) return out;
      }
      if (page.length === 0) return out;
      cursor = page.at(-1)!.sequence;
    }
  }
  const newest: SessionEvent[] = [];
  let top = Math.min(w.before - 1, await events.lastSequence(sessionId));
  while (top > w.after && newest.length < w.limit) {
    const from = Math.max(w.after, top - (w.accepts ? PAGE : Math.min(PAGE, w.limit - newest.length)));
    const page = await events.read(sessionId, { afterSequence: from, limit: top - from });
    for (let i = page.length - 1; i >= 0 && newest.length < w.limit; i--) {
      const e = page[i]!;
      if (e.sequence <= top && passes(e)) newest.push(e);
    }
    top = from;
  }
  return w.descending ? newest : newest.reverse();
}

/** Every event of a session, in order. */
export function readAll(events: EventLog, sessionId: string): Promise<SessionEvent[]> {
  return readWindow(events, sessionId, { after: 0, before: Infinity, limit: Infinity, fromEnd: false, descending: false, accepts: null });
}
