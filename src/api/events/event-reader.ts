import type { SessionEvent } from '../../../schemas/events.js';
import type { EventReader } from '../../bus/index.js';
import { InvalidRequestError } from '../../errors.js';
import type { EventWindow } from './event-query.js';

const PAGE = 1000;

/** The sequence of the event `id` names (the `since_id` or `around` parameter `field`); 0 for none, 400 when unknown. */
export async function resolveEventSequence(
  events: EventReader<SessionEvent>,
  sessionId: string,
  id: string | undefined,
  field: 'since_id' | 'around',
): Promise<number> {
  if (!id) return 0;
  const e = await events.findById(sessionId, id.toLowerCase());
  if (!e) throw new InvalidRequestError(`Invalid request: unknown ${field}`);
  return e.sequence;
}

/** An event's size in the listing's JSON, in bytes. */
function jsonBytes(e: SessionEvent): number {
  return Buffer.byteLength(JSON.stringify(e));
}

/**
 * Stops a page at `maxBytes` of serialised events, keeping at least one: a page of long deltas
 * (each serves the whole text so far) answered 244.6 MB at the default limit (issue 30 item 2).
 */
function byteBudget(maxBytes: number): (e: SessionEvent, taken: number) => boolean {
  let used = 0;
  return (e, taken) => {
    if (maxBytes === Infinity) return true;
    used += jsonBytes(e);
    return taken === 0 || used <= maxBytes;
  };
}

/** A page of the listing; `truncated` when the byte bound ended it before `limit` (the client goes on from its last event). */
export interface EventPage {
  events: SessionEvent[];
  truncated: boolean;
}

/**
 * The events of a window (src/api/events/event-query.ts), oldest first unless it is descending,
 * at most `maxBytes` of them serialised (default: no bound). Sequences are contiguous per session
 * (bus port), so the last events of a range are read as forward pages ending at its top, walking
 * down: no backward read is needed from either bus.
 */
export async function readWindow(
  events: EventReader<SessionEvent>,
  sessionId: string,
  w: EventWindow,
  maxBytes = Infinity,
): Promise<EventPage> {
  const passes = w.accepts ?? (() => true);
  const fits = byteBudget(maxBytes);
  if (!w.fromEnd) {
    const out: SessionEvent[] = [];
    let cursor = w.after;
    for (;;) {
      const page = await events.read(sessionId, { afterSequence: cursor, limit: w.accepts ? PAGE : Math.min(PAGE, w.limit - out.length) });
      for (const e of page) {
        if (e.sequence >= w.before) return { events: out, truncated: false };
        if (passes(e)) {
          if (!fits(e, out.length)) return { events: out, truncated: true };
          out.push(e);
        }
        if (out.length >= w.limit) return { events: out, truncated: false };
      }
      if (page.length === 0) return { events: out, truncated: false };
      cursor = page.at(-1)!.sequence;
    }
  }
  const newest: SessionEvent[] = [];
  let truncated = false;
  let top = Math.min(w.before - 1, await events.lastSequence(sessionId));
  while (top > w.after && newest.length < w.limit && !truncated) {
    const from = Math.max(w.after, top - (w.accepts ? PAGE : Math.min(PAGE, w.limit - newest.length)));
    const page = await events.read(sessionId, { afterSequence: from, limit: top - from });
    for (let i = page.length - 1; i >= 0 && newest.length < w.limit; i--) {
      const e = page[i]!;
      if (e.sequence > top || !passes(e)) continue;
      if (!fits(e, newest.length)) {
        truncated = true;
        break;
      }
      newest.push(e);
    }
    top = from;
  }
  return { events: w.descending ? newest : newest.reverse(), truncated };
}

/** Every event of a session, in order. */
export async function readAll(events: EventReader<SessionEvent>, sessionId: string): Promise<SessionEvent[]> {
  const all = { after: 0, before: Infinity, limit: Infinity, fromEnd: false, descending: false, accepts: null };
  return (await readWindow(events, sessionId, all)).events;
}
