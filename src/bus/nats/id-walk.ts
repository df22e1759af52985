import type { LoggedEvent } from '../ports.js';

/** A session message as a get returns it: the event, its stream sequence and its stored time (ms). */
export interface SessionMsg {
  event: LoggedEvent;
  streamSeq: number;
  time: number;
}

export interface IdWalkDeps {
  /** The session's first message at stream sequence >= from (the leader's get), or null. */
  nextFrom(from: number): Promise<SessionMsg | null>;
  /** Visits the session's messages from stream sequence `from` on until `visit` returns false (one consumer). */
  scanFrom(from: number, visit: (m: SessionMsg) => boolean): Promise<void>;
}

/** Where an event with a given id can be, by the stored times of the session's messages (ms). */
export interface IdWindow {
  /** The earliest stored time it can have. */
  from: number;
  /** Where it most likely is (its id's time less a little clock skew): the walk starts here. */
  near: number;
  /** Messages stored later than this are past it (Infinity: up to the tail). */
  until: number;
  /** The session's last stream sequence. */
  tailSeq: number;
}

/**
 * Gets one walk may spend before it hands the rest of its range to one ordered consumer. A
 * busy session stores about 20 events a second (LLM deltas), and an event is stored within
 * milliseconds of its id's time in the common case: a handful of gets finds it.
 */
export const DEFAULT_WALK_GETS = 32;

type Walked = { found: SessionMsg | null } | { resumeAt: number };

/**
 * Finds the session message with this event id inside `w` by single gets, without a consumer
 * (each consumer create and delete is a meta-group proposal on a cluster, which a restarted node
 * must replay to catch up). A binary search by stored time finds where `near` begins; the walk
 * goes forward from there to `until`, then covers `from` up to `near`. A walk longer than
 * `walkGets` finishes on one ordered consumer, so the cost stays bounded either way.
 */
export async function findIdInWindow(
  deps: IdWalkDeps,
  eventId: string,
  w: IdWindow,
  walkGets = DEFAULT_WALK_GETS,
): Promise<SessionMsg | null> {
  let budget = walkGets;
  let seen: SessionMsg | null = null;

  /** The least stream sequence in [lo, hi] whose next session message is stored at or after `time` (hi: none before hi). */
  async function firstAt(time: number, lo: number, hi: number): Promise<number> {
    while (lo < hi && !seen) {
      const mid = Math.floor((lo + hi) / 2);
      const m = await deps.nextFrom(mid);
      if (m?.event.id === eventId) seen = m;
      if (!m || m.time >= time) hi = mid;
      // Stored times may step back a little across a leader change: never search past hi.
      else lo = Math.min(m.streamSeq + 1, hi);
    }
    return lo;
  }

  /** Visits the session's messages from `at` while below `end` and stored no later than `until`. */
  async function walk(at: number, end: number, until: number): Promise<Walked> {
    while (at <= w.tailSeq && at < end) {
      if (budget-- <= 0) return { resumeAt: at };
      const m = await deps.nextFrom(at);
      if (!m || m.streamSeq >= end) break;
      if (m.event.id === eventId) return { found: m };
      if (m.time > until) break;
      at = m.streamSeq + 1;
    }
    return { found: null };
  }

  async function scanRest(at: number, end: number, until: number): Promise<SessionMsg | null> {
    let found: SessionMsg | null = null;
    await deps.scanFrom(at, (m) => {
      if (m.streamSeq >= end) return false;
      if (m.event.id === eventId) found = m;
      return found === null && m.time <= until && m.streamSeq < w.tailSeq;
    });
    return found;
  }

  /** Walks from `at` to `end` (exclusive) and `until`, on a consumer once the gets run out. */
  async function visit(at: number, end: number, until: number): Promise<SessionMsg | null> {
    if (seen) return seen;
    const r = await walk(at, end, until);
    return 'found' in r ? r.found : scanRest(r.resumeAt, end, until);
  }

  const near = Math.max(w.from, w.near);
  const nearSeq = await firstAt(near, 1, w.tailSeq + 1);
  const later = await visit(nearSeq, Number.POSITIVE_INFINITY, w.until);
  if (later || near <= w.from) return later;
  // Not at or after `near`: only a writer whose clock ran ahead of the server's stored it earlier.
  const fromSeq = await firstAt(w.from, 1, nearSeq);
  return visit(fromSeq, nearSeq, Number.POSITIVE_INFINITY);
}
