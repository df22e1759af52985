import type { Logger } from '../../log.js';
import type { Store } from '../../db/index.js';

export interface TailWatchOptions {
  store: Store;
  log: Logger;
  /** Interval between checks, in ms; 0 = never check (no other process can append). */
  pollMs: number;
}

interface Watched {
  /** Highest sequence this process has appended, notified or polled for the session. */
  known: number;
  wakers: Set<() => void>;
}

/**
 * Finds appends made by other processes on the same PostgreSQL for every watched session of
 * the instance with one query per `pollMs`, however many sessions are watched (one poll per
 * feed was ~4 queries/s per watched session). A session's feeds are woken only when its stored
 * tail is past what this process already knows, so appends made here (notified in process)
 * cost no wake-up. Nothing is polled while no session is watched.
 */
export function createTailWatch({ store, log, pollMs }: TailWatchOptions) {
  const watched = new Map<string, Watched>();
  let timer: NodeJS.Timeout | undefined;
  let polling = false;

  async function poll(): Promise<void> {
    if (polling || watched.size === 0) return;
    polling = true;
    try {
      // Ids are validated uuids (the event log asserts them), so the array literal is safe;
      // max() per session in a subquery is one backward index probe, unlike a GROUP BY scan.
      const ids = `{${[...watched.keys()].join(',')}}`;
      const rows = await store.sql<{ session_id: string; sequence: number | null }>(
        `select s.id as session_id, (select max(sequence) from bus_events e where e.session_id = s.id) as sequence
         from unnest(?::uuid[]) as s(id)`,
        [ids],
      );
      for (const { session_id, sequence } of rows) {
        const w = watched.get(session_id);
        if (!w || sequence === null || sequence <= w.known) continue;
        w.known = sequence;
        for (const wake of w.wakers) wake();
      }
    } catch (err) {
      // The next tick tries again; feeds lose nothing, they only learn of foreign appends later.
      log.warn({ err }, 'polling bus_events tails failed');
    } finally {
      polling = false;
    }
  }

  return {
    /** Calls `wake` whenever another process appends to the session; returns the unwatch function. */
    watch(sessionId: string, wake: () => void): () => void {
      let w = watched.get(sessionId);
      if (!w) {
        // known = 0: the first poll wakes the feed once, covering appends between its replay and that poll.
        w = { known: 0, wakers: new Set() };
        watched.set(sessionId, w);
      }
      w.wakers.add(wake);
      if (pollMs > 0 && !timer) timer = setInterval(() => void poll(), pollMs).unref();
      return () => {
        w.wakers.delete(wake);
        if (w.wakers.size === 0 && watched.get(sessionId) === w) watched.delete(sessionId);
        if (watched.size === 0) stop();
      };
    },
    /** This process stored the session up to `sequence` and notified its feeds in process. */
    seen(sessionId: string, sequence: number): void {
      const w = watched.get(sessionId);
      if (w && sequence > w.known) w.known = sequence;
    },
    /** The session's events were deleted: sequences start again from 1. */
    reset(sessionId: string): void {
      const w = watched.get(sessionId);
      if (w) w.known = 0;
    },
    close(): void {
      watched.clear();
      stop();
    },
  };

  function stop(): void {
    clearInterval(timer);
    timer = undefined;
  }
}

export type TailWatch = ReturnType<typeof createTailWatch>;
