import type { Logger } from '../../log.js';
import type { Store } from '../../db/index.js';
import type { Bus, LoggedEvent } from '../ports.js';
import { holding } from '../session-event.js';
import { createLocalSignals } from './local-signals.js';
import { createSqlEventLog } from './sql-event-log.js';
import { createSqlTurnQueue } from './sql-turn-queue.js';

export const DEFAULT_LEASE_MS = 60_000;
/**
 * PostgreSQL: other processes append too, so the instance checks the tails of its watched
 * sessions this often (one query for all of them). PGlite is one process: no poll at all.
 */
export const DEFAULT_POSTGRES_POLL_MS = 250;
export const DEFAULT_CLAIM_POLL_MS = 200;

export interface LocalBusOptions {
  store: Store;
  log: Logger;
  /** Turn claim lease, in ms (default 60000); heartbeat() extends it by this much. */
  leaseMs?: number;
  /** PostgreSQL: the instance looks for other processes' appends this often, in ms (default 250); unused on PGlite. */
  pollMs?: number;
  /** Idle claimers re-check the queue this often, in ms (default 200). */
  claimPollMs?: number;
}

/**
 * The embedded bus: event log and turn queue in SQL through the store, notifications in
 * process. Works on PGlite (one process) and on PostgreSQL shared by several processes.
 */
export async function createLocalBus<E extends LoggedEvent = LoggedEvent>({
  store,
  log,
  leaseMs = DEFAULT_LEASE_MS,
  pollMs = DEFAULT_POSTGRES_POLL_MS,
  claimPollMs = DEFAULT_CLAIM_POLL_MS,
}: LocalBusOptions): Promise<Bus<E>> {
  if (leaseMs <= 0 || pollMs <= 0 || claimPollMs <= 0) throw new RangeError('leaseMs, pollMs and claimPollMs must be > 0');
  const busLog = log.child({ component: 'bus', kind: 'local' });
  // PGlite is embedded in this process: every append is notified in process, nothing to poll
  // for, and the process knows the stored tails and claim tokens (sole-client.ts).
  const soleClient = store.kind === 'pglite';
  const events = createSqlEventLog({ store, log: busLog, pollMs: soleClient ? 0 : pollMs, soleClient });
  return {
    kind: 'local',
    events: holding<E>(events),
    turns: createSqlTurnQueue({ store, log: busLog, leaseMs, pollMs: claimPollMs, soleClient }),
    signals: createLocalSignals({ log: busLog }),
    ping: () => store.ping(),
    // The store belongs to the caller (the composition root closes it after the bus).
    async close() {
      events.closeAll();
    },
  };
}
