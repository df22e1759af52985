import { EventEmitter } from 'node:events';
import type { Store } from '../../db/index.js';
import { createKeyedChain, type KeyedChain } from '../keyed-chain.js';
import type { EventTail } from '../session-event.js';

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
  /** session id → claim token of the turn's current claim, as `bus_turns.claim_token` holds it. */
  claims: Map<string, string>;
}

const states = new WeakMap<Store, SoleClientState>();

/** The state shared by every local bus on `store`, created on first use. */
export function soleClientState(store: Store): SoleClientState {
  let state = states.get(store);
  if (!state) {
    state = { chain: createKeyedChain(), live: unlimitedEmitter(), tails: new Map(), claims: new Map() };
    states.set(store, state);
  }
  return state;
}

/** An emitter with one listener per subscription: no listener-count warning. */
export function unlimitedEmitter(): EventEmitter {
  const emitter = new EventEmitter();
  emitter.setMaxListeners(0);
  return emitter;
}
