import { EventEmitter } from 'node:events';
import type { Store } from '../../db/index.js';
import { createKeyedChain, type KeyedChain } from '../keyed-chain.js';
import { SessionLists } from '../session-lists.js';
import type { LoggedEvent } from '../ports.js';
import type { EventTail } from '../session-event.js';

/**
 * Bounds of the recent events kept per store (events hold whole messages and tool results): a
 * turn's preamble and a worker's largest append are well under 16 events, as in NATS mode.
 */
const RECENT_SESSIONS = 1_000;
const RECENT_PER_SESSION = 16;
/** A session not appended to for this long is forgotten (docs/decisions/0079-per-session-caches-forget-idle.md). */
const RECENT_IDLE_MS = 30_000;

/**
 * What a process knows for certain about the bus tables when it is the store's only client:
 * embedded PGlite, which the data-directory lock gives to one process, whose every write to
 * `bus_events` and `bus_turns` goes through the local bus. Kept per store, not per bus, so
 * several buses on one store (tests, a second worker) share it: an append or a claim made
 * through one is known to all of them, exactly as the tables would tell. On PostgreSQL other
 * processes write too, so nothing here is used there and every question goes to SQL.
 */
export interface SoleClientState {
  /** Per-session append chain: appends to one session run one at a time in the process. */
  chain: KeyedChain;
  /** Live notification of stored events, per session id. */
  live: EventEmitter;
  /** The stored tail of sessions this process appended to (exact: set from each append's statement). */
  tails: Map<string, EventTail>;
  /** The last events this process appended per session, as stored (shared, not copied: read-only). */
  recent: SessionLists<LoggedEvent>;
  /** session id → claim token of the turn's current claim, as `bus_turns.claim_token` holds it. */
  claims: Map<string, string>;
}

const states = new WeakMap<Store, SoleClientState>();

/** The state shared by every local bus on `store`, created on first use. */
export function soleClientState(store: Store): SoleClientState {
  let state = states.get(store);
  if (!state) {
    state = {
      chain: createKeyedChain(),
      live: unlimitedEmitter(),
      tails: new Map(),
      recent: new SessionLists(RECENT_SESSIONS, RECENT_PER_SESSION, (e) => e.sequence, RECENT_IDLE_MS),
      claims: new Map(),
    };
    states.set(store, state);
  }
  return state;
}

/**
 * The stored events after `after` (at most `limit`) from `recent`, when they run without a gap
 * from `after + 1` to the session's exact `tail`; otherwise null (read the table).
 */
export function recentAfter(recent: readonly LoggedEvent[] | undefined, after: number, tail: number, limit: number): LoggedEvent[] | null {
  if (!recent || recent.length === 0 || recent[recent.length - 1]!.sequence !== tail) return null;
  const first = recent.length - (tail - after);
  if (first < 0 || recent[first]!.sequence !== after + 1) return null;
  // Sequences in the list are distinct and increasing, so first and last in place mean no gap.
  return recent.slice(first, first + limit);
}

/** An emitter with one listener per subscription: no listener-count warning. */
export function unlimitedEmitter(): EventEmitter {
  const emitter = new EventEmitter();
  emitter.setMaxListeners(0);
  return emitter;
}
