import type { Logger } from '../../log.js';
import type { Store } from '../../store/index.js';
import type { Bus } from '../ports.js';
import { createLocalSignals } from './local-signals.js';
import { createSqlEventLog } from './sql-event-log.js';
import { createSqlTurnQueue } from './sql-turn-queue.js';

export const DEFAULT_LEASE_MS = 60_000;
/** PostgreSQL: other processes append too, so idle subscribers look at the table this often. */
export const DEFAULT_POSTGRES_POLL_MS = 250;
/** PGlite: one process, every append is notified; the poll is only a backstop. */
export const DEFAULT_PGLITE_POLL_MS = 2_000;
export const DEFAULT_CLAIM_POLL_MS = 200;

export interface LocalBusOptions {
  store: Store;
  log: Logger;
  /** Turn claim lease, in ms (default 60000); heartbeat() extends it by this much. */
  leaseMs?: number;
  /** Idle live subscribers re-read the log this often, in ms (default 250 on PostgreSQL, 2000 on PGlite). */
  pollMs?: number;
  /** Idle claimers re-check the queue this often, in ms (default 200). */
  claimPollMs?: number;
}

/**
 * The embedded bus: event log and turn queue in SQL through the store, notifications in
 * process. Works on PGlite (one process) and on PostgreSQL shared by several processes.
 */
export async function createLocalBus({
  store,
  log,
  leaseMs = DEFAULT_LEASE_MS,
  pollMs = store.kind === 'postgres' ? DEFAULT_POSTGRES_POLL_MS : DEFAULT_PGLITE_POLL_MS,
  claimPollMs = DEFAULT_CLAIM_POLL_MS,
}: LocalBusOptions): Promise<Bus> {
  if (leaseMs <= 0 || pollMs <= 0 || claimPollMs <= 0) throw new RangeError('leaseMs, pollMs and claimPollMs must be > 0');
  const busLog = log.child({ component: 'bus', kind: 'local' });
  const events = createSqlEventLog({ store, log: busLog, pollMs });
  return {
    kind: 'local',
    events,
    turns: createSqlTurnQueue({ store, log: busLog, leaseMs, pollMs: claimPollMs }),
    signals: createLocalSignals({ log: busLog }),
    ping: () => store.ping(),
    // The store belongs to the caller (the composition root closes it after the bus).
    async close() {
      events.closeAll();
    },
  };
}
